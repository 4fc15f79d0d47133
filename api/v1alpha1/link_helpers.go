package v1alpha1

// ShortURL is the link's public address, https://<domain>/<key>: what
// status.shortURL holds, the API's "link" field and a QR code's content.
// One definition, so the three can never disagree.
func (l *Link) ShortURL() string {
	return "https://" + string(l.Spec.Domain) + "/" + l.Spec.Key
}
