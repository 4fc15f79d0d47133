package main

import "fmt"

// chartVersion is the chart's own version; bump it when the chart changes
// in a release.
const chartVersion = "0.1.0"

// staticFiles are the chart's files that do not come from an object.
func staticFiles(d defaults) map[string][]byte {
	return map[string][]byte{
		"Chart.yaml": fmt.Appendf(nil, `# Generated from config/ by hack/gen-dist (make helm); do not edit.
apiVersion: v2
name: kurz
description: A Kubernetes-native link shortener (Links and Domains as CRDs, an API and a redirect server).
type: application
version: %s
appVersion: %q
`, chartVersion, d.Tag),

		".helmignore": []byte(`# Patterns to ignore when building packages.
.DS_Store
.git/
.gitignore
*.swp
*.bak
*.tmp
*.orig
*~
`),

		"templates/_helpers.tpl": fmt.Appendf(nil, `{{- /* Generated from config/ by hack/gen-dist (make helm); do not edit. */}}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "kurz.chart" -}}
{{- printf "%%s-%%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret the manager reads KURZ_REDIRECT_COOKIE_SECRET from. */}}
{{- define "kurz.cookieSecretName" -}}
{{- if and .Values.cookieSecret.existingSecret .Values.cookieSecret.value -}}
{{- fail "cookieSecret: set existingSecret or value, not both" -}}
{{- end -}}
{{- .Values.cookieSecret.existingSecret | default %q -}}
{{- end -}}
`, d.CookieSecretName),

		"templates/manager/secret-cookie.yaml": fmt.Appendf(nil, `{{- /* Generated from config/ by hack/gen-dist (make helm); do not edit. */}}
{{- if .Values.cookieSecret.value }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "kurz.cookieSecretName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/name: kurz
    app.kubernetes.io/managed-by: {{ .Release.Service }}
    helm.sh/chart: {{ include "kurz.chart" . }}
type: Opaque
stringData:
  %s: {{ .Values.cookieSecret.value | quote }}
{{- end }}
`, d.CookieSecretKey),

		"templates/NOTES.txt": []byte(`kurz {{ .Chart.AppVersion }} is installed in {{ .Release.Namespace }}.

Point your link domains (DNS) and an Ingress or load balancer at Service
kurz-redirect, and the API hostname at Service kurz-api. Give a team a
workspace by binding ClusterRole kurz-editor (or kurz-viewer) in a namespace.
{{- if not (or .Values.cookieSecret.existingSecret .Values.cookieSecret.value) }}

No cookieSecret is set: unless Secret {{ include "kurz.cookieSecretName" . }} exists,
each replica signs password cookies with its own key.
{{- end }}
`),
	}
}
