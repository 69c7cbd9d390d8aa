// Package capie2e runs Anvil under the real Cluster API: Cluster API's core
// manager and kubeadm bootstrap provider (test/capitest), the two `anvil
// serve` processes with the infrastructure provider and the in-place
// update extension, and simulated hosts (test/simhost) against one real
// API server (test/envtest). Its tests are in the _test files; this file
// only documents the package.
package capie2e
