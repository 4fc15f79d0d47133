package devenv

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigName names the cluster, user and context in DIR/kubeconfig.
const kubeconfigName = "kurz-dev"

// writeKubeconfig writes a self-contained cluster-admin kubeconfig for cfg
// (mode 0600: it holds the admin key).
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[kubeconfigName] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[kubeconfigName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[kubeconfigName] = &clientcmdapi.Context{
		Cluster:   kubeconfigName,
		AuthInfo:  kubeconfigName,
		Namespace: Workspace,
	}
	kc.CurrentContext = kubeconfigName
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return writeFileAtomic(path, data, 0o600)
}

// previousAPIPort returns the API server port recorded in an existing
// kubeconfig at path, or 0.
func previousAPIPort(path string) int {
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return 0
	}
	if c, ok := kc.Clusters[kubeconfigName]; ok {
		return portOf(c.Server)
	}
	return 0
}
