package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	"anvil.dev/anvil/capi/infra"
	"anvil.dev/anvil/capi/inplace"
)

// capiExtensionConfig is the in-place update extension's part of anvil
// serve's flags. Two ways to give it a certificate:
//   - CertDir: files someone else keeps (cert-manager's mounted Secret);
//     the admin writes the ExtensionConfig.
//   - CertSecret plus Service or URL: Anvil keeps a CA and serving
//     certificate in that Secret (or uses cert-manager's there) and
//     applies the ExtensionConfig "anvil" pointing at Service or URL, the
//     CA injected by Cluster API from the Secret. What clusterctl installs.
type capiExtensionConfig struct {
	Addr       string
	CertDir    string
	CertSecret string
	Service    string
	URL        string

	// Parsed by validate.
	certSecret types.NamespacedName
	service    *runtimev1.ServiceReference
	dnsNames   []string
	ips        []net.IP
}

func (c *capiExtensionConfig) bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.Addr, "capi-extension-bind-address", "", "serve Cluster API's in-place update hooks (Runtime SDK extension: upgrade the kubelet of Anvil's CAPI Machines in place) over HTTPS here, e.g. :9443 (empty: off); needs --capi-extension-cert-dir or --capi-extension-cert-secret, and Cluster API's Machine CRD")
	fs.StringVar(&c.CertDir, "capi-extension-cert-dir", "", "directory with tls.crt and tls.key (PEM) for --capi-extension-bind-address, reread when they change; you register the extension with an ExtensionConfig")
	fs.StringVar(&c.CertSecret, "capi-extension-cert-secret", "", "NAMESPACE/NAME of a Secret with the extension's certificate: created with a CA of its own and renewed by anvil if absent, used as it is if not anvil's (cert-manager's); anvil then registers the extension itself (ExtensionConfig \"anvil\") at --capi-extension-service or --capi-extension-url")
	fs.StringVar(&c.Service, "capi-extension-service", "", "NAMESPACE/NAME[:PORT] of the Service in front of --capi-extension-bind-address (port default 443): where Cluster API calls the extension, named by the certificate")
	fs.StringVar(&c.URL, "capi-extension-url", "", "https://HOST:PORT where Cluster API calls the extension when it runs outside the cluster (instead of --capi-extension-service), named by the certificate")
}

func (c *capiExtensionConfig) validate() error {
	if c.Addr == "" {
		for _, f := range []struct{ name, value string }{{"cert-dir", c.CertDir}, {"cert-secret", c.CertSecret}, {"service", c.Service}, {"url", c.URL}} {
			if f.value != "" {
				return fmt.Errorf("--capi-extension-%s is set but --capi-extension-bind-address is not: set it to serve Cluster API's in-place update hooks", f.name)
			}
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("--capi-extension-bind-address %q: %v", c.Addr, err)
	}
	switch {
	case c.CertDir == "" && c.CertSecret == "":
		return errors.New("--capi-extension-bind-address needs --capi-extension-cert-dir (a directory with tls.crt and tls.key) or --capi-extension-cert-secret (Cluster API calls extensions over HTTPS only)")
	case c.CertDir != "" && c.CertSecret != "":
		return errors.New("--capi-extension-cert-dir and --capi-extension-cert-secret are both set: choose one")
	case c.CertDir != "" && (c.Service != "" || c.URL != ""):
		return errors.New("--capi-extension-service and --capi-extension-url go with --capi-extension-cert-secret (Cluster API takes the CA from that Secret); with --capi-extension-cert-dir, write the ExtensionConfig yourself")
	case c.CertDir != "":
		return nil
	case (c.Service == "") == (c.URL == ""):
		return errors.New("--capi-extension-cert-secret needs exactly one of --capi-extension-service (in a cluster) and --capi-extension-url: where Cluster API calls the extension")
	}
	ns, name, ok := strings.Cut(c.CertSecret, "/")
	if !ok || validation.IsDNS1123Label(ns) != nil || validation.IsDNS1123Subdomain(name) != nil {
		return fmt.Errorf("--capi-extension-cert-secret %q: want NAMESPACE/NAME of a Secret", c.CertSecret)
	}
	c.certSecret = types.NamespacedName{Namespace: ns, Name: name}
	if c.Service != "" {
		ref, port, ok := strings.Cut(c.Service, ":")
		ns, name, ok2 := strings.Cut(ref, "/")
		p, err := strconv.ParseUint(port, 10, 16)
		if !ok2 || validation.IsDNS1123Label(ns) != nil || validation.IsDNS1035Label(name) != nil || (ok && (err != nil || p == 0)) {
			return fmt.Errorf("--capi-extension-service %q: want NAMESPACE/NAME[:PORT] of a Service", c.Service)
		}
		c.service = &runtimev1.ServiceReference{Namespace: ns, Name: name}
		if ok {
			c.service.Port = new(int32(p))
		}
		// The names Cluster API's runtime client dials and verifies.
		c.dnsNames = []string{name + "." + ns + ".svc", name + "." + ns + ".svc.cluster.local"}
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--capi-extension-url %q: want https://HOST[:PORT][/PATH], no user, query or fragment", c.URL)
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil {
		c.ips = []net.IP{ip}
	} else {
		c.dnsNames = []string{u.Hostname()}
	}
	return nil
}

// setupCAPI registers the Cluster API provider's controllers, after
// checking the API server serves the kinds they watch: without Cluster
// API's CRDs the manager would only fail later, and less clearly.
func setupCAPI(mgr ctrl.Manager) error {
	for _, gvk := range []schema.GroupVersionKind{
		clusterv1.GroupVersion.WithKind("Cluster"), clusterv1.GroupVersion.WithKind("Machine"),
		infrav1.GroupVersion.WithKind("AnvilMachine"), infrav1.GroupVersion.WithKind("AnvilCluster"),
	} {
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return fmt.Errorf("--capi: the API server does not serve %s (install Cluster API's core CRDs and deploy/crds): %w", gvk, err)
		}
	}
	if err := (&infra.AnvilMachineReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up AnvilMachine controller: %w", err)
	}
	if err := (&infra.AnvilClusterReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up AnvilCluster controller: %w", err)
	}
	return nil
}

// setupCAPIExtension adds the in-place update extension's HTTPS server,
// which answers on every replica from the manager's client and API reader,
// and, with --capi-extension-cert-secret, its certificate keeper and its
// registration with Cluster API.
func setupCAPIExtension(mgr ctrl.Manager, cfg serveConfig) error {
	c := cfg.CAPIExtension
	log := ctrl.Log.WithName("capi-inplace")
	opts := inplace.Options{Addr: c.Addr, CertDir: c.CertDir, Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), Logger: log}
	if c.CertSecret != "" {
		opts.CertSecret = &inplace.CertSecret{Key: c.certSecret, DNSNames: c.dnsNames, IPs: c.ips,
			Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), Logger: log}
	}
	srv, err := inplace.New(opts)
	if err != nil {
		return fmt.Errorf("--capi-extension-cert-dir: %w", err)
	}
	for _, gvk := range []schema.GroupVersionKind{clusterv1.GroupVersion.WithKind("Machine"), infrav1.GroupVersion.WithKind("AnvilMachine")} {
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return fmt.Errorf("--capi-extension-bind-address: the API server does not serve %s (install Cluster API's core CRDs and deploy/crds): %w", gvk, err)
		}
	}
	if c.CertSecret != "" {
		gvk := runtimev1.GroupVersion.WithKind("ExtensionConfig")
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return fmt.Errorf("--capi-extension-cert-secret: the API server does not serve %s, which anvil registers the extension with (install Cluster API's core CRDs): %w", gvk, err)
		}
		reg := &inplace.Registration{Service: c.service, URL: c.URL, CASecret: c.certSecret, Client: mgr.GetClient(), Logger: log}
		if err := mgr.Add(reg); err != nil {
			return err
		}
	}
	return mgr.Add(srv)
}
