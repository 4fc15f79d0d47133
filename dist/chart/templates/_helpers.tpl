{{- /* Generated from config/ by hack/gen-dist (make helm); do not edit. */}}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "kurz.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret the manager reads KURZ_REDIRECT_COOKIE_SECRET from. */}}
{{- define "kurz.cookieSecretName" -}}
{{- if and .Values.cookieSecret.existingSecret .Values.cookieSecret.value -}}
{{- fail "cookieSecret: set existingSecret or value, not both" -}}
{{- end -}}
{{- .Values.cookieSecret.existingSecret | default "kurz-redirect-cookie" -}}
{{- end -}}
