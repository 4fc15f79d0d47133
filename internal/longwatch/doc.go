// Package longwatch asks kube-apiserver for watches that last hours rather
// than client-go's 5 to 10 minutes, for a resource it serves from etcd.
//
// Without kube-apiserver's watch cache for a resource (kurz dev turns it off
// for Links: docs/scaling.md, "At a glance"), a watch gets no bookmarks:
// etcd's progress notifications reach the watch cache only. A reflector
// then learns a newer resourceVersion only from an event of that resource,
// so in a cluster where no Link changes, the one it holds stays the one of
// its list. kube-apiserver compacts etcd's history every 5 minutes, to the
// revision of the compaction before; when client-go ends its watch (a
// random 5 to 10 minutes) and watches again from that resourceVersion, the
// answer is 410 Gone, and the reflector lists every Link again. In a quiet
// kurz dev at 100 000 Links that came 16 and 27 minutes after the last
// write, each time 35 CPU-seconds of kube-apiserver and 11 to 12 of the
// replica, which then held 32 to 68 MiB more RSS than one beside it that
// had not listed again; at a million, kube-apiserver alone spends 205 to 235
// CPU-seconds on that stream (docs/scaling.md, "A quiet cluster").
// Upstream knows this as kubernetes/kubernetes#54974: bookmarks come from
// the watch cache only.
//
// A watch that lasts as long as its connection does not have to start again
// from the old resourceVersion, and an established etcd watch is not ended
// by a compaction. So the watches through Wrap last 12 to 24 hours. A
// connection that dies is still found within about 45 seconds by client-go's
// HTTP/2 pings (the hanging watch the short timeout guards against); after
// it, and after a kube-apiserver restart, the reflector watches again from
// its resourceVersion and lists only if that is gone.
// With the watch cache on, kube-apiserver's bookmarks keep the
// resourceVersion fresh anyway, and a long watch costs nothing more than a
// short one.
package longwatch
