package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/join/token"
)

// ErrSecret wraps every problem with a kubeconfig Secret (missing, no key,
// not a usable kubeconfig); ErrUnreachable a target that does not answer.
var (
	ErrSecret      = errors.New("target cluster kubeconfig Secret is unusable")
	ErrUnreachable = errors.New("target cluster is unreachable")
	// ErrSecretNotFound: the Secret does not exist (yet). It is an ErrSecret.
	ErrSecretNotFound = fmt.Errorf("%w: not found", ErrSecret)
)

// secretError names the Secret and what is wrong with it.
type secretError struct {
	key  types.NamespacedName
	msg  string
	kind error
}

func (e *secretError) Error() string {
	return fmt.Sprintf("target cluster Secret %s: %s", e.key, e.msg)
}
func (e *secretError) Unwrap() error { return e.kind }

func badSecret(key types.NamespacedName, format string, args ...any) error {
	return &secretError{key: key, msg: fmt.Sprintf(format, args...), kind: ErrSecret}
}

// readKubeconfig reads the kubeconfig bytes under dataKey of the Secret.
func readKubeconfig(ctx context.Context, r client.Reader, key types.NamespacedName, dataKey string) ([]byte, error) {
	s := &corev1.Secret{}
	if err := r.Get(ctx, key, s); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return nil, &secretError{key: key, kind: ErrSecretNotFound,
				msg: fmt.Sprintf("not found (create it with the target's kubeconfig under key %q)", dataKey)}
		case apierrors.IsForbidden(err):
			return nil, badSecret(key, "not readable by anvil (RBAC: it needs get on this Secret): %v", err)
		}
		return nil, fmt.Errorf("target cluster Secret %s: reading it: %w", key, err)
	}
	data := s.Data[dataKey]
	if len(data) == 0 {
		return nil, badSecret(key, "has no key %q (keys: %s)", dataKey, strings.Join(keys(s.Data), ", "))
	}
	return data, nil
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// restConfig turns a Secret's kubeconfig into a rest.Config. Kubeconfigs
// from Secrets may not point at files or run plugins: those would read the
// files or run the commands of anvil's own pod.
func restConfig(key types.NamespacedName, dataKey string, data []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, badSecret(key, "key %q is not a kubeconfig: %s", dataKey, scrub(err.Error(), data))
	}
	cc := clientcmd.NewNonInteractiveClientConfig(*cfg, cfg.CurrentContext, &clientcmd.ConfigOverrides{}, nil)
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, badSecret(key, "key %q: %s", dataKey, scrub(err.Error(), data))
	}
	ctxName := raw.CurrentContext
	kctx := raw.Contexts[ctxName]
	if kctx == nil {
		return nil, badSecret(key, "key %q: current-context %q is not defined", dataKey, ctxName)
	}
	cl, ai := raw.Clusters[kctx.Cluster], raw.AuthInfos[kctx.AuthInfo]
	if cl == nil {
		return nil, badSecret(key, "key %q: cluster %q of context %q is not defined", dataKey, kctx.Cluster, ctxName)
	}
	if err := noFiles(cl, ai); err != nil {
		return nil, badSecret(key, "key %q: %v", dataKey, err)
	}
	if cl.Server == "" {
		return nil, badSecret(key, "key %q: cluster %q has no server", dataKey, kctx.Cluster)
	}
	if !strings.HasPrefix(cl.Server, "https://") {
		return nil, badSecret(key, "key %q: server %s is not https:// (kubelets verify the target by its CA)", dataKey, cl.Server)
	}
	if cl.InsecureSkipTLSVerify || len(cl.CertificateAuthorityData) == 0 {
		return nil, badSecret(key, "key %q: cluster %q needs certificate-authority-data (kubelets are given the target's CA and its hash)", dataKey, kctx.Cluster)
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, badSecret(key, "key %q: %s", dataKey, scrub(err.Error(), data))
	}
	return rc, nil
}

// noFiles refuses references to local files and credential plugins.
func noFiles(cl *clientcmdapi.Cluster, ai *clientcmdapi.AuthInfo) error {
	if cl.CertificateAuthority != "" {
		return errors.New("certificate-authority points at a file; use certificate-authority-data")
	}
	if ai == nil {
		return nil
	}
	switch {
	case ai.ClientCertificate != "" || ai.ClientKey != "":
		return errors.New("client-certificate/client-key point at files; use client-certificate-data/client-key-data")
	case ai.TokenFile != "":
		return errors.New("tokenFile points at a file; use token")
	case ai.Exec != nil || ai.AuthProvider != nil:
		return errors.New("exec and auth-provider plugins are not allowed in a kubeconfig Secret; use a token or a client certificate")
	}
	return nil
}

// scrub removes any longer run of the kubeconfig's bytes that a parser
// error might quote (a token, key material), keeping messages safe to show.
func scrub(msg string, data []byte) string {
	for _, f := range strings.FieldsFunc(string(data), func(r rune) bool {
		return r == ' ' || r == '\n' || r == '\t' || r == '"' || r == '\'' || r == ':' || r == ','
	}) {
		if len(f) >= 12 && strings.Contains(msg, f) {
			msg = strings.ReplaceAll(msg, f, "<redacted>")
		}
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

// build makes a Target of a Secret's kubeconfig and checks that the target
// answers.
func build(ctx context.Context, key types.NamespacedName, dataKey string, data []byte, timeout time.Duration, mutate func(*rest.Config)) (*Target, error) {
	rc, err := restConfig(key, dataKey, data)
	if err != nil {
		return nil, err
	}
	if mutate != nil {
		mutate(rc)
	}
	hash, err := token.CACertHash(rc.CAData)
	if err != nil {
		return nil, badSecret(key, "key %q: certificate-authority-data: %v", dataKey, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, badSecret(key, "key %q: %s", dataKey, scrub(err.Error(), data))
	}
	c, err := client.New(rc, client.Options{})
	if err != nil {
		return nil, badSecret(key, "key %q: %s", dataKey, scrub(err.Error(), data))
	}
	t := &Target{Secret: key, SecretKey: dataKey, Config: rc, Clientset: cs, Client: c, Nodes: c, Server: rc.Host, CACertPEM: rc.CAData, CACertHash: hash}
	// One bounded call: a wrong server or wrong credentials fail here, with
	// the Secret named, rather than on a booting host.
	rcT := rest.CopyConfig(rc)
	rcT.Timeout = timeout
	csT, err := kubernetes.NewForConfig(rcT)
	if err != nil {
		return nil, badSecret(key, "key %q: %s", dataKey, scrub(err.Error(), data))
	}
	if _, err := t.version.get(csT); err != nil {
		return nil, &secretError{key: key, kind: ErrUnreachable,
			msg: fmt.Sprintf("the target cluster at %s does not answer with these credentials: %s", rc.Host, scrub(err.Error(), data))}
	}
	return t, nil
}
