// Command gen-dist turns the rendered manifests of config/default (the output
// of `kustomize build config/default` on stdin) into the release artefacts:
//
//	-install FILE  one file to `kubectl apply` (make build-installer), with -image; - is stdout
//	-chart DIR     the Helm chart (make helm); its input also holds config/prometheus, whose
//	               ServiceMonitor the chart installs only with metrics.serviceMonitor.enabled
//
// Both come from the same objects, so neither can drift from config/: the
// chart's templates are those objects with a few well-defined fields (the
// namespace, image, replicas, resources, the flags the values own and the
// cookie Secret's name) replaced by template expressions. `make verify`
// regenerates both and fails on any difference.
package main
