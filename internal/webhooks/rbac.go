package webhooks

// Every replica's dispatcher reads Webhooks and writes their delivery
// figures, and reads the signing Secrets. RBAC cannot grant Secrets by
// label: the rule lets kurz list and watch the Secrets of every namespace,
// and its cache asks kube-apiserver for those labelled
// kurz.dev/webhook-signing=true only (CacheSecrets), so no other Secret
// reaches it. No get: the cache lists and watches. docs/security.md says
// so, and how to switch it off (--webhooks=false, and the rule).
// +kubebuilder:rbac:groups=kurz.dev,resources=webhooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kurz.dev,resources=webhooks/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
