// Package controllers holds the Link and Domain reconcilers.
//
// The Domain controller proves domains through DNS and settles which
// namespace holds a hostname; the Link controller decides whether each link
// serves (Ready) and why not. Both write status only, once per pass and only
// when it changed, and never react to status writes (click flushes), so a
// settled cluster costs no writes at all.
package controllers

import (
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kurz-dev/kurz/internal/dns"
)

// Leader election: the manager elects a leader (a Lease) and the
// controllers run on it only, controller-runtime's default. The Lease rights
// are not markers here on purpose: config/rbac/leader_election_role.yaml
// grants them in kurz's own namespace only, where a marker would grant them
// cluster-wide.

// Setup adds the controllers to mgr. They run on the elected leader only.
// Call it before mgr starts.
func Setup(mgr ctrl.Manager, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	verifier, err := dns.New(dns.Config{Server: o.DNSServer, Targets: o.RedirectTargets, Timeout: o.DNSTimeout, ZoneConcurrency: o.DNSZoneChecks})
	if err != nil {
		return err
	}
	links := &LinkReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("kurz.dev/link-controller"),
		Now:      time.Now,
	}
	if err := links.SetupWithManager(mgr, o.LinkWorkers); err != nil {
		return fmt.Errorf("set up Link controller: %w", err)
	}
	domains := &DomainReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("kurz.dev/domain-controller"),
		Verifier: verifier,
		Schedule: Schedule{Recheck: o.DNSRecheckInterval, Backoff: o.PendingBackoff, BackoffMax: o.PendingBackoffMax},
		Now:      time.Now,
	}
	if err := domains.SetupWithManager(mgr, o.DomainWorkers); err != nil {
		return fmt.Errorf("set up Domain controller: %w", err)
	}
	return nil
}
