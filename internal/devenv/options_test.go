package devenv

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "another data dir", Edit: func(o *Options) { o.DataDir = "/tmp/kurz" }, Error: ""},
		{Name: "no data dir", Edit: func(o *Options) { o.DataDir = "" }, Error: "data-dir"},
		{Name: "no progress writer", Edit: func(o *Options) { o.Out = nil }, Error: "Out"},
		{Name: "no token audience", Edit: func(o *Options) { o.TokenAudience = "" }, Error: "TokenAudience"},
		{Name: "kube-apiserver GOGC off", Edit: func(o *Options) { o.KubeAPIServerGOGC = 0 }, Error: "kube-apiserver-gogc"},
		{Name: "no etcd quota", Edit: func(o *Options) { o.EtcdQuotaBytes = -1 }, Error: "etcd-quota-backend-bytes"},
	})
}

func TestOptionsFlags(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(optionstest.Parse(&o)).To(Succeed())
	g.Expect(o.DataDir).To(Equal(DefaultDataDir))
	g.Expect(optionstest.Parse(&o, "--data-dir", "/x")).To(Succeed())
	g.Expect(o.DataDir).To(Equal("/x"))
	g.Expect(o.KubeAPIServerGOGC).To(Equal(DefaultKubeAPIServerGOGC))
	g.Expect(optionstest.Parse(&o, "--kube-apiserver-gogc", "150")).To(Succeed())
	g.Expect(o.KubeAPIServerGOGC).To(Equal(150))
}
