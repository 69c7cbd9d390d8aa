// Package simhost simulates bare-metal hosts for scale tests and
// benchmarks: thousands of them in one process, each doing over the real
// wire what a real server, its anvil-agent and its kubelet do, and nothing
// more.
//
// A simulated host watches its Host object (one shared informer for the
// whole fleet). When the Host controller has acted on a network boot
// (pxe/index.Decide says PXE: the BMC took the one-time boot), the host
// waits a simulated POST, then fetches its iPXE script from Anvil's HTTP
// boot server (GET /boot/<mac>.ipxe), takes the config URL with the boot
// credential from the kernel arguments and, after a simulated kernel boot,
// fetches its Ignition config the way Ignition does (5xx and network
// errors retried, anything else final), or, for a cloud-init class
// (ds=nocloud-net;s=<seed>), the NoCloud seed as cloud-init 22.4 does
// (<seed>meta-data, user-data, vendor-data), walking MIME multipart
// user-data for its cloud-config parts' write_files.
// That fetch is what makes the Machine controller count the boot as
// booted (Host.status.bootCredential.consumedAt for this boot request).
// From the config it reads /etc/anvil/agent.env (endpoint, agent
// credential) and /etc/anvil/kubelet.env (node name, providerID, kubelet
// version; see Class). A Machine with Cluster API bootstrap data gets that
// data with Anvil's agent part (boot/delivery), which has no kubelet.env:
// its kubelet registers the Node under the host's hostname (meta-data
// local-hostname; for Ignition /etc/hostname, else ANVIL_NODE_NAME)
// without a providerID, as kubeadm's does, on the version
// Options.KubeletVersionFor gives. Then:
//
//   - the agent (after a simulated OS start) reports through the agent
//     API (agent/onhost/client, the real protocol) with a fresh boot ID, polls
//     for actions at the agent's interval (the server's hint wins when
//     longer, as in agent/onhost/daemon),
//     applies upgrade plans (progress phases, a simulated delay, optional
//     failure injection, the Node's kubeletVersion changed before success
//     is reported, as the real agent health-checks it) and wipes
//     (result Wiped);
//   - the kubelet registers its Node (name, providerID anvil://<host-uid> or none,
//     nodeInfo.kubeletVersion, Ready and the pressure conditions,
//     addresses, capacity) and posts node status at kubelet's report
//     interval (default 5 minutes, jittered).
//
// Each host uses its own loopback source address (127.100.0.0/16 and up),
// so per-address rate limits and the config server's address binding see
// distinct clients, as on a real network. HTTP requests go through one
// shared transport without keep-alive; API writes through one shared,
// unthrottled client; in-flight work is bounded by Options.Concurrency.
//
// What it does not simulate: DHCP and TFTP (the boot storm benchmark does),
// the kernel, initrd and kubelet downloads (delays instead), the kubelet's TLS
// bootstrap and CSRs (the Node is created with the fleet's credentials),
// Node Leases, and pods.
package simhost
