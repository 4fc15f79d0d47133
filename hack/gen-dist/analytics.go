package main

import (
	"strings"

	"sigs.k8s.io/yaml"
)

// The chart's analytics (issue 28), off by default so that the chart with
// its defaults stays config/'s install manifest: config/ has no analytics,
// the values add it. Paths in the container:
const (
	analyticsDir = "/var/lib/kurz-analytics" // the SQLite store's volume
	geoipDir     = "/var/lib/kurz-geoip"     // the operator's GeoIP volume
)

// lines joins template lines, each on its own line at column col.
func lines(col int, ls ...string) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString("\n" + indent(col) + l)
	}
	return b.String()
}

// analyticsArgs are the manager's analytics flags, at the args items'
// column. A PostgreSQL store is not among them: the manager reads its URL
// from KURZ_ANALYTICS_STORE (analyticsEnv), so the password is in neither
// the Pod spec's args nor the process's command line.
func analyticsArgs(col int) string {
	i := col + 2
	return lines(i,
		"{{- if .Values.analytics.enabled }}",
		`{{- $store := include "kurz.analyticsStore" . }}`,
		`- "--analytics"`,
		`{{- if eq $store "sqlite" }}`,
		`- "--analytics-store=`+analyticsDir+`/analytics.db"`,
		"{{- end }}",
		"{{- with .Values.analytics.retention }}",
		`- {{ printf "--analytics-retention=%s" . | quote }}`,
		"{{- end }}",
		"{{- with .Values.analytics.geoip.file }}",
		`- {{ printf "--geoip-database=`+geoipDir+`/%s" . | quote }}`,
		"{{- end }}",
		"{{- with .Values.analytics.otlp.endpoint }}",
		`- {{ printf "--analytics-otlp-endpoint=%s" . | quote }}`,
		"{{- end }}",
		"{{- end }}")
}

// analyticsEnv are the env entries from Secrets: the PostgreSQL URL (it
// holds a password: not in the Pod spec's args) and the OTLP headers.
func analyticsEnv(col int) string {
	return lines(col,
		`{{- if eq (include "kurz.analyticsStore" .) "postgres" }}`,
		"- name: KURZ_ANALYTICS_STORE",
		"  valueFrom:",
		"    secretKeyRef:",
		"      name: {{ .Values.analytics.store.postgres.secretName | quote }}",
		"      key: {{ .Values.analytics.store.postgres.secretKey | quote }}",
		"{{- end }}",
		"{{- if and .Values.analytics.enabled .Values.analytics.otlp.headersSecret.name }}",
		"- name: OTEL_EXPORTER_OTLP_HEADERS",
		"  valueFrom:",
		"    secretKeyRef:",
		"      name: {{ .Values.analytics.otlp.headersSecret.name | quote }}",
		"      key: {{ .Values.analytics.otlp.headersSecret.key | quote }}",
		"{{- end }}")
}

func analyticsMounts(col int) string {
	return lines(col,
		`{{- if eq (include "kurz.analyticsStore" .) "sqlite" }}`,
		"- name: analytics",
		"  mountPath: "+analyticsDir,
		"{{- end }}",
		`{{- if and .Values.analytics.enabled .Values.analytics.geoip.file }}`,
		"- name: geoip",
		"  mountPath: "+geoipDir,
		"  readOnly: true",
		"{{- end }}")
}

func analyticsVolumes(col int) string {
	return lines(col,
		`{{- if eq (include "kurz.analyticsStore" .) "sqlite" }}`,
		"- name: analytics",
		"  persistentVolumeClaim:",
		`    claimName: {{ .Values.analytics.store.sqlite.existingClaim | default "kurz-analytics" | quote }}`,
		"{{- end }}",
		`{{- if and .Values.analytics.enabled .Values.analytics.geoip.file }}`,
		"- name: geoip",
		"  {{- toYaml .Values.analytics.geoip.volume | nindent "+itoa(col+2)+" }}",
		"{{- end }}")
}

func itoa(n int) string {
	b, _ := yaml.Marshal(n)
	return strings.TrimSpace(string(b))
}

// listBlock is a list as the value of a key at column col (items at the
// key's column, as config/ writes them), starting with a newline; "" for
// an empty list (the template adds items, or the key stays empty: null).
func listBlock(l []any, col int) string {
	if len(l) == 0 {
		return ""
	}
	y, _ := yaml.Marshal(l)
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(y), "\n"), "\n") {
		b.WriteString("\n" + indent(col) + line)
	}
	return b.String()
}

// mapBlock is a map's YAML lines at column col, starting with a newline.
func mapBlock(m map[string]any, col int) string {
	y, _ := yaml.Marshal(m)
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(y), "\n"), "\n") {
		b.WriteString("\n" + indent(col) + line)
	}
	return b.String()
}

// analyticsHelpers define kurz.analyticsStore: the store the values ask
// for ("", postgres or sqlite), failing the render, with the reason, on
// values the chart cannot honour.
const analyticsHelpers = `
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
`

// analyticsPVC is the SQLite store's PersistentVolumeClaim.
const analyticsPVC = `{{- /* Generated from config/ by hack/gen-dist (make helm); do not edit. */}}
{{- if and (eq (include "kurz.analyticsStore" .) "sqlite") (not .Values.analytics.store.sqlite.existingClaim) }}
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: kurz-analytics
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/name: kurz
    app.kubernetes.io/managed-by: {{ .Release.Service }}
    helm.sh/chart: {{ include "kurz.chart" . }}
  annotations:
    # The analytics outlive an uninstall, as the CRDs do.
    helm.sh/resource-policy: keep
spec:
  accessModes: [ReadWriteOnce]
  {{- with .Values.analytics.store.sqlite.storageClassName }}
  storageClassName: {{ . | quote }}
  {{- end }}
  resources:
    requests:
      storage: {{ .Values.analytics.store.sqlite.size | quote }}
{{- end }}
`

// analyticsValues is values.yaml's analytics section.
const analyticsValues = `
# Click analytics (off by default: an upgrade changes nothing). store.type:
#   postgres: every replica writes to one PostgreSQL database, whose URL
#     (postgres://user:password@host:5432/db?sslmode=require) is key
#     store.postgres.secretKey of Secret store.postgres.secretName, e.g.
#     CloudNativePG's <cluster>-app Secret and key uri (--analytics-store);
#   sqlite: a file on a PersistentVolumeClaim (store.sqlite.size, or
#     existingClaim), only with replicas: 1, and the Deployment then uses the
#     Recreate strategy (no zero-drop rollouts);
#   "": no store (export over OTLP only; the analytics API answers 503).
# retention: how long raw events are kept, e.g. 2160h; empty: kurz's default
# (--analytics-retention). geoip: a MaxMind-format .mmdb (file) in a volume
# (any volume source, e.g. {persistentVolumeClaim: {claimName: geoip}}),
# reloaded when it changes (--geoip-database). otlp: an OTLP/HTTP endpoint,
# e.g. http://otel-collector.observability:4318, getting one log record per
# aggregated row (--analytics-otlp-endpoint), with headers (key=value,...)
# from key headersSecret.key of Secret headersSecret.name.
analytics:
  enabled: false
  store:
    type: postgres
    postgres:
      secretName: ""
      secretKey: uri
    sqlite:
      size: 10Gi
      storageClassName: ""
      existingClaim: ""
  retention: ""
  geoip:
    file: ""
    volume: {}
  otlp:
    endpoint: ""
    headersSecret:
      name: ""
      key: headers
`

const analyticsSchema = `,
    "analytics": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enabled": {"type": "boolean"},
        "store": {
          "type": "object",
          "additionalProperties": false,
          "properties": {
            "type": {"enum": ["postgres", "sqlite", ""]},
            "postgres": {
              "type": "object",
              "additionalProperties": false,
              "properties": {"secretName": {"type": "string"}, "secretKey": {"type": "string"}}
            },
            "sqlite": {
              "type": "object",
              "additionalProperties": false,
              "properties": {
                "size": {"type": "string", "pattern": "^([0-9]+(Ki|Mi|Gi|Ti|k|M|G|T)?)?$"},
                "storageClassName": {"type": "string"},
                "existingClaim": {"type": "string"}
              }
            }
          }
        },
        "retention": {"type": "string"},
        "geoip": {
          "type": "object",
          "additionalProperties": false,
          "properties": {"file": {"type": "string", "pattern": "^[^/]*$"}, "volume": {"type": "object"}}
        },
        "otlp": {
          "type": "object",
          "additionalProperties": false,
          "properties": {
            "endpoint": {"type": "string", "pattern": "^(https?://.+)?$"},
            "headersSecret": {
              "type": "object",
              "additionalProperties": false,
              "properties": {"name": {"type": "string"}, "key": {"type": "string"}}
            }
          }
        }
      }
    }`
