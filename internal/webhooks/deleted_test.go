package webhooks

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// A Webhook read from the cache just before it was deleted must get no
// sender: its delete handler (forget) may have run already, and nothing
// would stop the sender's goroutine or free its queue. The informer drops
// the object from its store, then runs the handler; the test does the
// same, then asks for the sender with the object the caller had read.
func TestNoSenderForAWebhookDeletedMeanwhile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	d := &Dispatcher{o: DefaultOptions(), webhooks: store, ctx: ctx, senders: map[types.UID]*sender{}}
	read := &kurzv1alpha1.Webhook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hook", UID: "uid-1", Generation: 1},
		Spec: kurzv1alpha1.WebhookSpec{URL: "https://receiver.example.com/hook",
			Events: []kurzv1alpha1.WebhookEvent{kurzv1alpha1.EventLinkClicked}, SecretRef: kurzv1alpha1.WebhookSecretRef{Name: "signing"}},
	}
	if err := store.Add(read); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(read); err != nil {
		t.Fatal(err)
	}
	d.forget(read.UID)

	if s := d.senderFor(read); s != nil {
		s.stop(dropShutdown)
		t.Fatal("a Webhook deleted after it was read got a sender, which nothing would stop")
	}
	if n := len(d.sendersNow()); n != 0 {
		t.Fatalf("%d senders after the only Webhook was deleted", n)
	}

	// The same name made again is another Webhook (a new uid): the object
	// read before still gets none, the new one gets its sender.
	again := read.DeepCopy()
	again.UID = "uid-2"
	if err := store.Add(again); err != nil {
		t.Fatal(err)
	}
	if s := d.senderFor(read); s != nil {
		s.stop(dropShutdown)
		t.Fatal("the deleted Webhook's stale object got a sender once its name was taken again")
	}
	s := d.senderFor(again)
	if s == nil {
		t.Fatal("the Webhook in the store got no sender")
	}
	s.stop(dropShutdown)
}
