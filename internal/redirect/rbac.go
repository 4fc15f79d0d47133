package redirect

// What the redirect server itself needs, on every replica: the informers that
// fill the index, the live reads after a conflict, and the click patches.

// +kubebuilder:rbac:groups=kurz.dev,resources=links;domains,verbs=get;list;watch
// +kubebuilder:rbac:groups=kurz.dev,resources=links/status,verbs=patch
