package main

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// helmChart is the chart's files: one template per object of config/ (the
// Namespace aside: Helm installs into the release namespace), with only the
// fields the values own templated, plus Chart.yaml, values.yaml, helpers and
// the optional cookie Secret.
func helmChart(objs []*unstructured.Unstructured) (map[string][]byte, error) {
	objs = deepCopy(objs)
	ns, err := namespaceOf(objs)
	if err != nil {
		return nil, err
	}
	dep, container, err := managerDeployment(objs)
	if err != nil {
		return nil, err
	}
	d, keptArgs, err := readDefaults(dep, container)
	if err != nil {
		return nil, err
	}
	values, err := valuesYAML(d)
	if err != nil {
		return nil, err
	}
	files := staticFiles(d)
	files["values.yaml"] = values

	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		t := &templater{}
		dir, wrap := placeOf(o)
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		// Written as placeholders after SetLabels, which wants plain strings.
		o.SetLabels(labels)
		ml := o.Object["metadata"].(map[string]any)["labels"].(map[string]any)
		ml["app.kubernetes.io/managed-by"] = t.scalar("{{ .Release.Service }}")
		ml["helm.sh/chart"] = t.scalar(`{{ include "kurz.chart" . }}`)
		if o.GetKind() == "CustomResourceDefinition" {
			// Deleting a CRD deletes every Link or Domain: helm uninstall keeps them.
			ann := o.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann["helm.sh/resource-policy"] = "keep"
			o.SetAnnotations(ann)
		}
		releaseNamespace(o.Object, ns, t)
		if o.GetKind() == "Service" && dir == "metrics" {
			ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			for _, p := range ports {
				p.(map[string]any)["port"] = t.scalar("{{ .Values.metrics.port }}")
			}
			_ = unstructured.SetNestedSlice(o.Object, ports, "spec", "ports")
		}
		if o == dep {
			templateDeployment(dep, container, keptArgs, t)
		}
		body, err := t.render(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		name := path.Join("templates", dir, strings.ToLower(o.GetKind()+"-"+o.GetName())+".yaml")
		if _, dup := files[name]; dup {
			return nil, fmt.Errorf("two objects map to %s", name)
		}
		files[name] = []byte(generatedHeader + wrap[0] + body + wrap[1])
	}
	return files, nil
}

const generatedHeader = "{{- /* Generated from config/ by hack/gen-dist (make helm); do not edit. */}}\n"

// placeOf is the templates/ folder an object goes to, in the layout of
// kubebuilder's helm plugin, and the conditional around it.
func placeOf(o *unstructured.Unstructured) (string, [2]string) {
	always := [2]string{"", ""}
	switch o.GetKind() {
	case "CustomResourceDefinition":
		return "crd", [2]string{"{{- if .Values.crds.install }}\n", "{{- end }}\n"}
	case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
		return "rbac", always
	case "ServiceMonitor":
		// From config/prometheus: only where the Prometheus Operator runs.
		return "prometheus", [2]string{"{{- if and .Values.metrics.enable .Values.metrics.serviceMonitor.enabled }}\n", "{{- end }}\n"}
	case "Service":
		if isMetricsService(o) {
			return "metrics", [2]string{"{{- if and .Values.metrics.enable .Values.metrics.service.enable }}\n", "{{- end }}\n"}
		}
	}
	return "manager", always
}

// isMetricsService: every port of the Service targets the port named metrics.
func isMetricsService(o *unstructured.Unstructured) bool {
	ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
	for _, p := range ports {
		if m, _ := p.(map[string]any); m["targetPort"] != "metrics" {
			return false
		}
	}
	return len(ports) > 0
}

// releaseNamespace points every namespace field naming config/'s namespace
// (metadata.namespace, subjects[].namespace, ...) at the release namespace.
func releaseNamespace(v any, ns string, t *templater) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if s, ok := child.(string); ok && k == "namespace" && s == ns {
				v[k] = t.scalar("{{ .Release.Namespace }}")
				continue
			}
			releaseNamespace(child, ns, t)
		}
	case []any:
		for _, child := range v {
			releaseNamespace(child, ns, t)
		}
	}
}

// templateDeployment sets the manager Deployment's value-owned fields.
func templateDeployment(dep *unstructured.Unstructured, c map[string]any, keptArgs []string, t *templater) {
	dep.Object["spec"].(map[string]any)["replicas"] = t.scalar("{{ .Values.replicas }}")
	c["image"] = t.scalar(`"{{ .Values.image.repository }}:{{ .Values.image.tag }}"`)
	c["imagePullPolicy"] = t.scalar("{{ .Values.image.pullPolicy }}")
	c["resources"] = t.block(func(col int) string {
		return fmt.Sprintf("\n{{- toYaml .Values.resources | nindent %d }}", col+2)
	})
	c["args"] = t.block(func(col int) string { return argsBlock(keptArgs, col) })
	env, _, _ := unstructured.NestedSlice(c, "env")
	for _, e := range env {
		switch m := e.(map[string]any); m["name"] {
		case cookieSecretEnv:
			m["valueFrom"].(map[string]any)["secretKeyRef"].(map[string]any)["name"] = t.scalar(`{{ include "kurz.cookieSecretName" . | quote }}`)
		case spoolLimitEnv:
			m["value"] = t.scalar("{{ .Values.clickSpoolSizeLimit | quote }}")
		}
	}
	c["env"] = t.block(func(col int) string { return listBlock(env, col) + analyticsEnv(col) })
	mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	c["volumeMounts"] = t.block(func(col int) string { return listBlock(mounts, col) + consoleMounts(col) + analyticsMounts(col) })
	// A SQLite analytics store is a file on a ReadWriteOnce volume: the old
	// pod must let go of it before the new one starts.
	strategy, _, _ := unstructured.NestedMap(dep.Object, "spec", "strategy")
	dep.Object["spec"].(map[string]any)["strategy"] = t.block(func(col int) string {
		return "\n" + indent(col) + `{{- if eq (include "kurz.analyticsStore" .) "sqlite" }}` + "\n" + indent(col+2) + "type: Recreate" +
			"\n" + indent(col) + "{{- else }}" + mapBlock(strategy, col+2) + "\n" + indent(col) + "{{- end }}"
	})
	// The volume's sizeLimit is the same value (readDefaults checked config/).
	volumes, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		if m := v.(map[string]any); m["name"] == spoolVolume {
			m["emptyDir"].(map[string]any)["sizeLimit"] = t.scalar("{{ .Values.clickSpoolSizeLimit | quote }}")
		}
	}
	dep.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"] = t.block(func(col int) string {
		return listBlock(volumes, col) + consoleVolumes(col) + analyticsVolumes(col)
	})
	ports, _, _ := unstructured.NestedSlice(c, "ports")
	for _, p := range ports {
		if m := p.(map[string]any); m["name"] == "metrics" {
			m["containerPort"] = t.scalar("{{ .Values.metrics.port }}")
		}
	}
	c["ports"] = ports
}

// argsBlock is the manager's args: config/'s own, minus the flags the values
// own, then those from the values, then extraArgs.
func argsBlock(kept []string, col int) string {
	item := "\n" + indent(col+2) + "- "
	ctl := "\n" + indent(col+2)
	var b strings.Builder
	for _, a := range kept {
		q, _ := json.Marshal(a)
		b.WriteString(item + string(q))
	}
	b.WriteString(item + `{{ if .Values.metrics.enable }}{{ printf "--metrics-bind-address=:%v" .Values.metrics.port | quote }}{{ else }}"--metrics-bind-address=0"{{ end }}`)
	b.WriteString(ctl + "{{- if .Values.leaderElection.enable }}" + item + `"--leader-elect"` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- with .Values.trustedProxies }}" + item + `{{ printf "--redirect-trusted-proxies=%s" (join "," .) | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- range .Values.redirectTargets }}" + item + `{{ printf "--redirect-target=%s" . | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- with .Values.dnsServer }}" + item + `{{ printf "--dns-server=%s" . | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- with .Values.clickFlushInterval }}" + item + `{{ printf "--click-flush-interval=%s" . | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- with .Values.ingress.className }}" + item + `{{ printf "--ingress-class=%s" . | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- range $key, $value := .Values.ingress.annotations }}" + item + `{{ printf "--ingress-annotation=%s=%s" $key $value | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- with .Values.ingress.gracePeriod }}" + item + `{{ printf "--route-grace-period=%s" . | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- with .Values.gateway.className }}" + item + `{{ printf "--gateway-class=%s" . | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- with .Values.gateway.name }}" + item + `{{ printf "--gateway=%s" . | quote }}` + ctl + "{{- end }}")
	b.WriteString(ctl + "{{- range $key, $value := .Values.gateway.annotations }}" + item + `{{ printf "--gateway-annotation=%s=%s" $key $value | quote }}` + ctl + "{{- end }}")
	b.WriteString(consoleArgs(col))
	b.WriteString(analyticsArgs(col))
	b.WriteString(ctl + "{{- range .Values.extraArgs }}" + item + "{{ . | quote }}" + ctl + "{{- end }}")
	return b.String()
}
