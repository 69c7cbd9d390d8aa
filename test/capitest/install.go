package capitest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"anvil.dev/anvil/deploy"
)

const fieldOwner = "capitest"

// webhookURL is where the API server reaches a manager's webhook path.
func webhookURL(port int, path string) string {
	return "https://127.0.0.1:" + strconv.Itoa(port) + path
}

// crds builds a provider's config/crd kustomization as hack/tools copied
// it (bases, contract labels, conversion webhook patches) and points each
// conversion webhook at the manager's loopback port instead of the
// in-cluster Service the patches name.
func crds(dir string, port int, caBundle []byte) ([]*unstructured.Unstructured, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s: unexpected %s %s", dir, u.GetKind(), u.GetName())
		}
		if s, _, _ := unstructured.NestedString(m, "spec", "conversion", "strategy"); s == string(apiextensionsv1.WebhookConverter) {
			path, _, _ := unstructured.NestedString(m, "spec", "conversion", "webhook", "clientConfig", "service", "path")
			if path == "" {
				return nil, fmt.Errorf("CRD %s: conversion webhook without a service path", u.GetName())
			}
			cc := map[string]any{"url": webhookURL(port, path), "caBundle": base64.StdEncoding.EncodeToString(caBundle)}
			if err := unstructured.SetNestedMap(m, cc, "spec", "conversion", "webhook", "clientConfig"); err != nil {
				return nil, err
			}
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kustomize build %s: no CRDs", dir)
	}
	return out, nil
}

// webhookConfigs reads a provider's webhook configurations (config/webhook/
// manifests.yaml), renamed after the provider (every provider names its
// own mutating-webhook-configuration), each webhook pointed at the
// manager's loopback port.
func webhookConfigs(file, provider string, port int, caBundle []byte) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if k := u.GetKind(); k != "MutatingWebhookConfiguration" && k != "ValidatingWebhookConfiguration" {
			return nil, fmt.Errorf("%s: unexpected %s %s", file, k, u.GetName())
		}
		u.SetName("capi-" + provider + "-" + u.GetName())
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for i, h := range hooks {
			hm := h.(map[string]any)
			path, _, _ := unstructured.NestedString(hm, "clientConfig", "service", "path")
			if path == "" {
				return nil, fmt.Errorf("%s: webhook %v without a service path", file, hm["name"])
			}
			hm["clientConfig"] = map[string]any{"url": webhookURL(port, path), "caBundle": base64.StdEncoding.EncodeToString(caBundle)}
			hooks[i] = hm
		}
		if err := unstructured.SetNestedSlice(u.Object, hooks, "webhooks"); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// apply server-side applies objs (a test binary's second Start replaces the
// first's ports and CA).
func apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// established waits until the API server serves every CRD in objs.
func established(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	names := make([]string, 0, len(objs))
	for _, u := range objs {
		names = append(names, u.GetName())
	}
	return deploy.WaitEstablished(ctx, c, names...)
}

// crdDir and webhookFile are where hack/tools/build.sh put a provider's
// kustomization and webhook configurations.
func crdDir(bin, provider string) string { return filepath.Join(bin, "crds", provider) }
func webhookFile(bin, provider string) string {
	return filepath.Join(bin, "webhooks", provider+".yaml")
}
