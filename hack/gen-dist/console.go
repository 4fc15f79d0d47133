package main

// The web console's session key (issue 30): a Secret every replica mounts,
// so a session one replica issued is accepted by all. config/ has none (its
// install manifest cannot make a random key): without the flag each replica
// seals with a key of its own and says so in its log.
const (
	consoleSessionDir    = "/etc/kurz/console-session"
	consoleSessionSecret = "kurz-console-session"
	consoleSessionKey    = "key"
)

// consoleArgs is the manager's --console-session-key-file, at the args
// items' column.
func consoleArgs(col int) string {
	return lines(col+2, `- "--console-session-key-file=`+consoleSessionDir+"/"+consoleSessionKey+`"`)
}

func consoleMounts(col int) string {
	return lines(col,
		"- name: console-session",
		"  mountPath: "+consoleSessionDir,
		"  readOnly: true")
}

func consoleVolumes(col int) string {
	return lines(col,
		"- name: console-session",
		"  secret:",
		`    secretName: {{ include "kurz.consoleSessionSecretName" . | quote }}`,
		"    items:",
		"    - key: "+consoleSessionKey,
		"      path: "+consoleSessionKey)
}

const consoleHelpers = `
{{/* The Secret holding the console session key. */}}
{{- define "kurz.consoleSessionSecretName" -}}
{{- .Values.consoleSession.existingSecret | default "` + consoleSessionSecret + `" -}}
{{- end -}}
`

// consoleSecret is the Secret the chart makes unless the operator names
// one: a random key on install, the same key on every upgrade (lookup
// reads the live Secret), so upgrades keep users signed in. helm template
// cannot look up and renders a new key each time.
const consoleSecret = `{{- /* Generated from config/ by hack/gen-dist (make helm); do not edit. */}}
{{- if not .Values.consoleSession.existingSecret }}
{{- $old := lookup "v1" "Secret" .Release.Namespace "` + consoleSessionSecret + `" }}
apiVersion: v1
kind: Secret
metadata:
  name: ` + consoleSessionSecret + `
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/name: kurz
    app.kubernetes.io/managed-by: {{ .Release.Service }}
    helm.sh/chart: {{ include "kurz.chart" . }}
type: Opaque
data:
  {{- if and $old $old.data (index $old.data "` + consoleSessionKey + `") }}
  ` + consoleSessionKey + `: {{ index $old.data "` + consoleSessionKey + `" }}
  {{- else }}
  ` + consoleSessionKey + `: {{ randAlphaNum 64 | b64enc }}
  {{- end }}
{{- end }}
`

// consoleValues is values.yaml's consoleSession section.
const consoleValues = `
# The key sealing the web console's session cookies, shared by all replicas
# (--console-session-key-file, mounted from a Secret). By default the chart
# creates Secret ` + consoleSessionSecret + ` with a random key (randAlphaNum 64) and
# keeps it on upgrades. existingSecret: a Secret of yours in the release
# namespace instead, with key "` + consoleSessionKey + `": one key a line, at least 32
# characters; the first seals, every line opens, so a key is rotated by
# putting the new one first and the old one second, then (after 8 hours, the
# longest session) dropping it. Replicas read the file at start: restart
# them (kubectl rollout restart) after changing it.
consoleSession:
  existingSecret: ""
`

const consoleSchema = `,
    "consoleSession": {
      "type": "object",
      "additionalProperties": false,
      "properties": {"existingSecret": {"type": "string"}}
    }`
