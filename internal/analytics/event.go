package analytics

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Limits of an Event's strings, in bytes. The capture side truncates to
// them; Event.Validate refuses longer values so that a store never holds
// more than this per value.
const (
	MaxReferrerLen = 253 // a DNS name
	MaxUTMLen      = 255
	MaxNameLen     = 64 // OS and browser names from the UA parser
	// MaxCityLen bounds Event.City, its country and "/" included: the
	// longest English city name in GeoNames is under 100 bytes.
	MaxCityLen = 128
)

// Device is the class of the client that clicked, from its User-Agent.
// The values are stored: never renumber them.
type Device uint8

const (
	// DeviceOther is a client the parser knows nothing about (a TV, a
	// download tool), and the zero value.
	DeviceOther Device = iota
	DeviceDesktop
	DeviceMobile
	DeviceTablet
	// DeviceBot is a crawler, a link unfurler, a script or a client that
	// sent no User-Agent; Query.ExcludeBots leaves these out.
	DeviceBot
	numDevices
)

var deviceNames = [numDevices]string{"other", "desktop", "mobile", "tablet", "bot"}

// String is the device's name as the API writes it.
func (d Device) String() string {
	if d < numDevices {
		return deviceNames[d]
	}
	return fmt.Sprintf("Device(%d)", uint8(d))
}

// Valid reports whether d is one of the named devices.
func (d Device) Valid() bool { return d < numDevices }

// ParseDevice is the Device named s ("desktop", ...).
func ParseDevice(s string) (Device, bool) {
	for i, n := range deviceNames {
		if n == s {
			return Device(i), true
		}
	}
	return 0, false
}

// DeviceNames are the devices' names, in their numeric order.
func DeviceNames() []string { return deviceNames[:] }

// LinkRef names the Link a click was for. UID is what the store keys on
// (names can be reused after a delete; uids cannot); the rest is kept for
// answers ("top links") and is updated by later events.
type LinkRef struct {
	UID       string
	Namespace string
	Name      string
	Domain    string
	Key       string
}

// Event is one click, or Clicks identical clicks, after the off-path
// enrichment (UA parsing, visitor hash, UTM merge) on the writer goroutine.
type Event struct {
	// Time is the click's time; stores keep it at minute resolution (UTC).
	Time time.Time
	Link LinkRef
	// Visitor is the keyed hash of client IP and User-Agent with the salt of
	// Time's UTC day (VisitorHasher); 0 is unknown and never counted as a
	// visitor.
	Visitor uint64
	Device  Device
	// OS and Browser are the UA parser's names, "" when unknown.
	OS, Browser string
	// Country is ISO 3166-1 alpha-2, upper case; "" unknown.
	Country string
	// City is the visitor's city from the GeoIP file, keyed by its country
	// (two cities share a name): Country, "/", and the file's English name
	// ("DE/Berlin", CityKey); "" unknown, always when the country came
	// from the trusted header.
	City string
	// Referrer is the referring page's host, lower case; "" is direct.
	Referrer string
	// UTMSource, UTMMedium and UTMCampaign are those of the URL the visitor
	// was sent to (MergeUTM).
	UTMSource, UTMMedium, UTMCampaign string
	// Clicks is how many identical clicks this event stands for (the
	// Aggregator's count); at least 1 in a Batch.
	Clicks int64
	// Ident, when not nil, says that the producer interned this event
	// (capture's consumer does): Ident points to the producer's copy of
	// Link, never changed (equal pointers, equal Links), and each string
	// field is "" or the producer's one copy of that value, a whole
	// allocation of its own. The Aggregator then finds the event's row by
	// these addresses instead of hashing its strings. Stores ignore it; a
	// Batch's events have none.
	Ident *LinkRef
	// Memo, when not nil (and Ident is set), is the producer's place for
	// the Aggregator to remember the row of this link's last event (one
	// per link): a link clicked again by the same visitor with the same
	// dimensions within the minute is then counted without a map access.
	Memo *AggMemo
}

// AggMemo is an Aggregator's memory of one link's last row (Event.Memo).
// Its zero value remembers nothing; only the producer's goroutine, the
// Aggregator's, touches it.
type AggMemo struct {
	agg   *Aggregator
	epoch uint64
	key   identKey
	row   int
}

// Minute is the event's time in unix minutes, the stores' time key.
func (e *Event) Minute() int64 { return e.Time.Unix() / 60 }

// Validate refuses an event no store should hold, naming the field.
func (e *Event) Validate() error {
	switch {
	case e.Time.IsZero():
		return fmt.Errorf("event: time is zero")
	case e.Time.Unix() < 0:
		return fmt.Errorf("event: time %s is before 1970", e.Time)
	case e.Link.UID == "":
		return fmt.Errorf("event: link uid is empty")
	case e.Link.Namespace == "":
		return fmt.Errorf("event: link %s has no namespace", e.Link.UID)
	case !e.Device.Valid():
		return fmt.Errorf("event: device %d is not one of %v", e.Device, deviceNames)
	case e.Clicks < 1:
		return fmt.Errorf("event: clicks %d is below 1", e.Clicks)
	case len(e.OS) > MaxNameLen || len(e.Browser) > MaxNameLen:
		return fmt.Errorf("event: os or browser longer than %d bytes", MaxNameLen)
	case e.Country != "" && !isCountry(e.Country):
		return fmt.Errorf("event: country %q is not two upper-case letters", e.Country)
	case e.City != "" && !validCity(e.City, e.Country):
		return fmt.Errorf("event: city %q is not the country %q, \"/\" and a name of at most %d bytes in all", e.City, e.Country, MaxCityLen)
	case len(e.Referrer) > MaxReferrerLen:
		return fmt.Errorf("event: referrer longer than %d bytes", MaxReferrerLen)
	case len(e.UTMSource) > MaxUTMLen || len(e.UTMMedium) > MaxUTMLen || len(e.UTMCampaign) > MaxUTMLen:
		return fmt.Errorf("event: a utm value is longer than %d bytes", MaxUTMLen)
	}
	return nil
}

func isCountry(s string) bool {
	return len(s) == 2 && 'A' <= s[0] && s[0] <= 'Z' && 'A' <= s[1] && s[1] <= 'Z'
}

// CityKey is Event.City for a city named name (the GeoIP file's English
// name) in country (ISO 3166-1 alpha-2, upper case): "DE/Berlin". It is ""
// when either is unknown or the name is not usable (not UTF-8, a control
// character, a comma, which the API's filters separate values with, or
// longer than MaxCityLen in all).
func CityKey(country, name string) string {
	return string(AppendCityKey(nil, country, name))
}

// AppendCityKey appends CityKey(country, name) to dst, without allocating
// when dst has room.
func AppendCityKey(dst []byte, country, name string) []byte {
	if !isCountry(country) || 3+len(name) > MaxCityLen || !validCityName(name) {
		return dst
	}
	dst = append(dst, country...)
	dst = append(dst, '/')
	return append(dst, name...)
}

func validCity(city, country string) bool {
	return len(city) <= MaxCityLen && len(city) > 3 && city[:2] == country && city[2] == '/' && validCityName(city[3:])
}

func validCityName(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ',' {
			return false
		}
	}
	return true
}

// NormalizeCountry is s as an Event's Country: two ASCII letters upper-cased,
// anything else (including Cloudflare's "XX" and "T1") "".
func NormalizeCountry(s string) string {
	if len(s) != 2 {
		return ""
	}
	b := [2]byte{s[0] &^ 0x20, s[1] &^ 0x20} // ASCII upper case
	if !isCountry(string(b[:])) || (b == [2]byte{'X', 'X'}) || (b == [2]byte{'T', '1'}) {
		return ""
	}
	if s[0] == b[0] && s[1] == b[1] {
		return s
	}
	return string(b[:])
}

// Batch is what one writer hands a store in one call. ID is the writer's id
// (pod and a random suffix, new for every process) + "-" + a sequence
// number: a store applies a batch id at most once, so a retried batch is not
// counted twice.
type Batch struct {
	ID     string
	Events []Event
}

// MaxBatchIDLen bounds Batch.ID.
const MaxBatchIDLen = 128

// Validate checks the whole batch, so that nothing of a bad batch is written.
func (b *Batch) Validate() error {
	if b.ID == "" || len(b.ID) > MaxBatchIDLen {
		return fmt.Errorf("batch: id must be 1 to %d bytes, got %d", MaxBatchIDLen, len(b.ID))
	}
	for i := range b.Events {
		if err := b.Events[i].Validate(); err != nil {
			return fmt.Errorf("batch %s, event %d: %w", b.ID, i, err)
		}
	}
	return nil
}
