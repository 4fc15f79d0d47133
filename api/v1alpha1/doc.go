// Package v1alpha1 holds the kurz.dev/v1alpha1 API: the Link, Domain and
// Webhook kinds.
//
// # Conditions and their states
//
// Every kind carries Ready, Reconciling and Stalled conditions and
// status.observedGeneration, following the kstatus conventions
// (sigs.k8s.io/cli-utils/pkg/kstatus) that Flux and Argo CD's health
// scripts (config/argocd) read. Reconciling and Stalled are present only
// while True. Every state reads as one of three:
//
//   - Current (Argo CD: Healthy): settled; nothing will change until the
//     spec or the world does.
//   - InProgress (Progressing): waiting on the world, such as DNS or a
//     Domain not created yet; it settles by itself. Reconciling=True.
//   - Failed (Degraded): only a change of this object's spec, or the
//     removal of another object, settles it. Stalled=True.
//
// Link:
//
//	state                                   Ready                Reconciling          Stalled               kstatus
//	serves its destination                  True  Active         -                    -                     Current
//	expired; expiry behaviour in force      True  Expired        -                    -                     Current
//	no Domain of its hostname in namespace  False DomainNotFound True DomainNotFound  -                     InProgress
//	its Domain waits for TXT proof          False DomainNotFound True TXTRequired     -                     InProgress
//	hostname held by another Domain         False DomainNotFound -                    True DomainClaimed    Failed
//	an older Link holds its domain and key  False KeyConflict    -                    True KeyConflict      Failed
//
// Domain:
//
//	state                                   Ready                     Reconciling               Stalled             kstatus
//	owns its hostname, DNS proves it        True  Verified            -                         -                   Current
//	owns its hostname, DNS does not yet     False VerificationPending True VerificationPending  -                   InProgress
//	contested claim waiting for TXT proof   False TXTRequired         True TXTRequired          -                   InProgress
//	hostname held by another Domain         False DomainClaimed       -                         True DomainClaimed  Failed
//
// Webhook:
//
//	state                                   Ready                  Reconciling           Stalled               kstatus
//	can deliver, last attempt succeeded     True  Subscribed       -                     -                     Current
//	the last delivery attempt failed        False DeliveryFailing  True DeliveryFailing  -                     InProgress
//	no labelled Secret, or no such key      False SecretNotFound   -                     True SecretNotFound   Failed
//	the Secret's value is not whsec_...     False SecretInvalid    -                     True SecretInvalid    Failed
//	the URL leads to a refused address      False URLRefused       -                     True URLRefused       Failed
//	the receiver answered 410 Gone          False ReceiverGone     -                     True ReceiverGone     Failed
//
// An object without status yet, or whose status.observedGeneration is
// behind metadata.generation (not reconciled since its last edit, or a
// Domain whose DNS check of that edit failed), is InProgress whatever its
// conditions say; one being deleted is Terminating.
//
// Decisions: an expired Link is Ready (its spec asked for expiry), so a
// GitOps tool does not wait forever on a normal end state. A Domain held by
// another workspace is Stalled even though publishing its TXT record (a DNS
// change) would settle it too: nothing changes until a person acts. A
// contested claim that nobody holds only waits for that TXT record, so it
// is Reconciling. kurz cannot tell a wrong DNS record from a missing one (a
// TXT record with another value is absent), so a Domain DNS does not prove
// yet is Reconciling; a malformed spec never gets this far, the API server
// refuses it.
//
// +kubebuilder:object:generate=true
// +groupName=kurz.dev
package v1alpha1
