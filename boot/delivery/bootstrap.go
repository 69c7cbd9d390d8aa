package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/render"
)

// A Machine with spec.bootstrap.dataSecretName (one a Cluster API
// AnvilMachine made) boots with that Secret's data instead of its class's
// rendered config, with anvil-agent's files added (bootstrapagent.go). The
// Secret is read uncached (GET by name through the clientset, no informer
// on Secrets), only after the boot credential verified. Errors name the
// Secret and the key, never a value.
//
// The boot service needs get on Secrets in the Machines' namespaces for
// this: deploy/rbac/bootstrap-data.yaml (ClusterRole
// anvil-pxe-bootstrap-data, bound per namespace).

// bootstrapSecret is the Machine's bootstrap data Secret name, "" if its
// class's template is rendered.
func bootstrapSecret(m *metalv1.Machine) string {
	if b := m.Spec.Bootstrap; b != nil {
		return b.DataSecretName
	}
	return ""
}

// bootstrapData reads the Machine's bootstrap data and checks it is of the
// format want (the kind of config the class's boot asks for).
func (c *Configs) bootstrapData(ctx context.Context, t target, want metalv1.BootstrapDataFormat) ([]byte, error) {
	m := t.machine
	name := bootstrapSecret(m)
	what := bootstrapWhat(m)
	s, err := c.o.Clientset.CoreV1().Secrets(m.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s not found", what)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	format := metalv1.BootstrapDataFormat(s.Data[metalv1.BootstrapDataFormatKey])
	if format == "" {
		format = metalv1.BootstrapFormatCloudConfig // Cluster API's default
	}
	switch format {
	case metalv1.BootstrapFormatCloudConfig, metalv1.BootstrapFormatIgnition:
	default:
		// The format is not secret, but it is user input of any length:
		// quote a bounded prefix.
		return nil, fmt.Errorf("%s has format %.32q, want %s or %s", what, string(format), metalv1.BootstrapFormatCloudConfig, metalv1.BootstrapFormatIgnition)
	}
	if format != want {
		return nil, fmt.Errorf("%s has format %s, but MachineClass %s boots with %s: use a class of format %s", what, format, t.classKey(), want, formatClass(format))
	}
	value, ok := s.Data[metalv1.BootstrapDataValueKey]
	if !ok || len(value) == 0 {
		return nil, fmt.Errorf("%s has no key %s (or it is empty)", what, metalv1.BootstrapDataValueKey)
	}
	return value, nil
}

// bootstrapWhat names the Machine's bootstrap data Secret in errors.
func bootstrapWhat(m *metalv1.Machine) string {
	return fmt.Sprintf("bootstrap data Secret %s/%s (spec.bootstrap.dataSecretName of Machine %s)", m.Namespace, bootstrapSecret(m), m.Name)
}

// bootstrapIgnition is the Machine's Ignition bootstrap data with the
// agent's files added.
func (c *Configs) bootstrapIgnition(ctx context.Context, t target) ([]byte, error) {
	data, err := c.bootstrapData(ctx, t, metalv1.BootstrapFormatIgnition)
	if err != nil {
		return nil, err
	}
	env, ok, err := c.bootstrapAgentEnv(ctx, t, metalv1.BootstrapFormatIgnition)
	if err != nil || !ok {
		return data, err
	}
	return withAgentIgnition(data, env, bootstrapWhat(t.machine))
}

// bootstrapSeed is the NoCloud seed of the Machine's cloud-config
// bootstrap data with the agent's part added.
func (c *Configs) bootstrapSeed(ctx context.Context, t target) (*render.NoCloud, error) {
	data, err := c.bootstrapData(ctx, t, metalv1.BootstrapFormatCloudConfig)
	if err != nil {
		return nil, err
	}
	env, ok, err := c.bootstrapAgentEnv(ctx, t, metalv1.BootstrapFormatCloudConfig)
	if err != nil {
		return nil, err
	}
	if ok {
		kubelet, err := c.machineKubelet(ctx, t)
		if err != nil {
			return nil, err
		}
		if data, err = withAgentCloudConfig(data, env, kubelet); err != nil {
			return nil, fmt.Errorf("%s: adding anvil-agent's part: %v", bootstrapWhat(t.machine), err)
		}
	}
	return bootstrapNoCloud(t, data), nil
}

func formatClass(f metalv1.BootstrapDataFormat) string {
	if f == metalv1.BootstrapFormatIgnition {
		return FormatButane
	}
	return FormatCloudInit
}

// bootstrapNoCloud is the NoCloud seed of bootstrap data: userData, and
// meta-data with an instance-id that changes with it (it carries the
// boot's agent credential, which cloud-init must write again on a new
// boot) and the Host, the Host's hostname and the Machine's providerID
// (for a jinja cloud-config's {{ ds.meta_data.provider_id }}).
func bootstrapNoCloud(t target, userData []byte) *render.NoCloud {
	sum := sha256.New()
	sum.Write([]byte(t.host.UID))
	sum.Write([]byte{0})
	sum.Write(userData)
	id := "anvil-bootstrap-" + hex.EncodeToString(sum.Sum(nil))[:16]
	return &render.NoCloud{
		InstanceID: id,
		MetaData:   fmt.Appendf(nil, "instance-id: %s\nlocal-hostname: %s\nprovider-id: %s%s\n", id, hostname(t.host), metalv1.ProviderIDPrefix, t.host.UID),
		UserData:   userData,
	}
}
