// Package devenv is the local control plane behind `kurz dev`: it runs etcd
// and kube-apiserver as child processes of kurz, installs the kurz CRDs and
// user roles, turns namespace "default" into a workspace with an API token,
// and hands the manager an admin *rest.Config.
//
// Everything lives in one data directory (--data-dir, default .kurz) so that
// a restart with the same directory keeps every object and every issued
// token:
//
//	DIR/lock            flock(2) held while a kurz dev uses DIR; holds its pid
//	DIR/etcd/           etcd data (the cluster's whole state)
//	DIR/pki/ca.crt      CA for the serving and admin client certificates
//	DIR/pki/ca.key
//	DIR/pki/apiserver.crt, apiserver.key
//	                    kube-apiserver serving certificate (localhost, 127.0.0.1, ::1)
//	DIR/pki/admin.crt, admin.key
//	                    client certificate in group system:masters (cluster admin)
//	DIR/pki/sa.key      service-account token signing key; keeping it is what
//	                    keeps old tokens valid across restarts
//	DIR/pki/sa.pub      its public half, rewritten at each start
//	DIR/logs/etcd.log, kube-apiserver.log
//	                    output of the children, truncated at each start
//	DIR/kubeconfig      cluster-admin kubeconfig (mode 0600), rewritten at each
//	                    start because the API server port may change
//	DIR/token           bearer token of ServiceAccount default/kurz-admin, bound
//	                    to ClusterRole kurz-editor in namespace default
//	                    (mode 0600), minted for audience kurz (the first of
//	                    --api-token-audiences), so it is an API token and
//	                    not a kube-apiserver credential; kept while it is
//	                    valid for that audience for another week, otherwise
//	                    replaced by a new one-year token
//	DIR/console-session.key
//	                    key sealing the web console's session cookies (mode
//	                    0600), made by cmd/kurz on first start unless
//	                    --console-session-key-file is given, so a console
//	                    session survives a restart
//
// Keys are never regenerated while they are valid; certificates are reissued
// when they expire within 30 days. The children listen on loopback only, on
// free ports (the API server keeps its previous port when it is still free),
// never on Options.ReservedPorts: kurz dev's own listeners open after them.
// On Linux they get SIGKILL from the kernel when kurz dies (Pdeathsig), so a
// killed kurz leaves no stray etcd or kube-apiserver behind, and the kernel
// releases the flock with it.
//
// There is no kube-controller-manager: no garbage collection, no namespace
// finalization, no service-account token controller. kurz does not need
// them.
package devenv
