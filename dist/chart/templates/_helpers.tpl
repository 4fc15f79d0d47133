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

{{/* The Secret holding the console session key. */}}
{{- define "kurz.consoleSessionSecretName" -}}
{{- .Values.consoleSession.existingSecret | default "kurz-console-session" -}}
{{- end -}}

{{/* The analytics store: "" (none, or analytics off), "postgres" or "sqlite". */}}
{{- define "kurz.analyticsStore" -}}
{{- $a := .Values.analytics -}}
{{- if $a.enabled -}}
{{- $s := $a.store.type -}}
{{- if eq $s "sqlite" -}}
{{- if ne (int .Values.replicas) 1 -}}
{{- fail (printf "analytics.store.type sqlite needs replicas: 1, not %v: the SQLite file lives on a ReadWriteOnce PersistentVolume that one pod mounts, so other replicas would have no store, and a rolling update could not start the new pod before the old one lets go of the volume. With sqlite the chart uses the Recreate strategy (every update stops kurz before starting it again: no zero-drop rollouts). For several replicas use analytics.store.type postgres." .Values.replicas) -}}
{{- end -}}
{{- if not (or $a.store.sqlite.existingClaim $a.store.sqlite.size) -}}
{{- fail "analytics.store.type sqlite needs a PersistentVolume: set analytics.store.sqlite.size (the chart creates PersistentVolumeClaim kurz-analytics) or analytics.store.sqlite.existingClaim" -}}
{{- end -}}
{{- else if eq $s "postgres" -}}
{{- if not (and $a.store.postgres.secretName $a.store.postgres.secretKey) -}}
{{- fail "analytics.store.type postgres needs analytics.store.postgres.secretName and secretKey: the Secret holding the database URL (postgres://user:password@host/db?sslmode=...), e.g. CloudNativePG's <cluster>-app Secret with key uri" -}}
{{- end -}}
{{- end -}}
{{- if and $a.geoip.file (not $a.geoip.volume) -}}
{{- fail "analytics.geoip.file needs analytics.geoip.volume: the volume (e.g. a persistentVolumeClaim kept up to date by geoipupdate) the .mmdb file is in" -}}
{{- end -}}
{{- $s -}}
{{- end -}}
{{- end -}}
