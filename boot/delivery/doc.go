// Package delivery hands each booting Host its own config: the iPXE script
// that carries a one-time boot credential, and the config source that renders
// Ignition or cloud-init for the Host's Machine with a freshly minted
// bootstrap token.
//
// The flow for one boot of a Host (see pxe/index.Decide for when a Host
// network boots at all):
//
//  1. iPXE asks GET /boot/<mac>.ipxe. Scripts builds the script from the
//     index's BootSpec (kernel, initrds, the class's kernel arguments) and,
//     for a Host being provisioned (or a provisioned diskless Host whose
//     next boot its Machine armed with a Rejoin request: it gets the same
//     config, on the kubelet version its Node last ran), appends the config
//     URL with a fresh boot credential: ignition.config.url=<base>/config/<mac>/ignition?cred=<c>
//     and ignition.platform.id=metal for Butane classes, or
//     ds=nocloud-net;s=<base>/config/<mac>/nocloud/<c>/ for cloud-init classes
//     (the spelling cloud-init 22.4, in Debian 12, needs for an http seed),
//     or, for a class with spec.image, anvil.install=<base>/config/<mac>/install?cred=<c>:
//     the installer (agent/install.go) checks in with the credential without
//     spending it, writes the image and hands the seed URL to the installed
//     OS. Once it reported the image written, the boot's script exits to the
//     disk and no new credential is issued in that boot.
//  2. The credential is issued once per boot. A boot is identified by the
//     Host's status.bootRequestID; the credential's hash is written to
//     status.bootCredential together with that ID and the time the script
//     was served, in one optimistic-concurrency status patch. Of two script
//     requests in the same boot, even on two replicas, exactly one gets the
//     credential; the other gets the same script without it (logged and
//     counted), so that the boot fails loudly instead of leaking the
//     config. A later boot (a new bootRequestID) gets a new credential,
//     which voids the old one. If the API server shows the Host in another
//     boot than the informer did when the script was decided (the patch
//     met a conflict, and the re-read disagrees), no credential is issued
//     and the host is told to ask again in 2 s (BootChangedScript; counted
//     as boot_changed): it then gets the answer for the boot it is in.
//  3. Only the MAC's address gets a credential: the address our DHCP
//     leased to it, or its Host's static address (spec.network.address).
//     Every other request, and in full DHCP mode any request for a MAC with
//     neither, gets the script an idle Host gets (exit to the local disk),
//     byte for byte, whatever the MAC's state: an outsider cannot tell
//     unknown, idle and provisioning MACs apart. In proxy DHCP mode a Host
//     without a static address gets no credential, unless the binding is
//     BindFirstRequest (first script request of the boot wins). Requests
//     are rate limited per source address (ScriptRate; 429).
//     The credential is bound to the address its script went to
//     (status.bootCredential.scriptServedTo): a config request from
//     anywhere else is refused without spending it.
//  4. The OS fetches its config from /config/... (package configserver),
//     which verifies the credential and calls Configs. Configs builds the
//     render.Vars of the Host and its Machine and renders the class's
//     template through the shared, content-addressed render.Renderer.
//     The bootstrap token in it is the Machine's still valid Anvil token
//     if it has one, else one minted now: tokens are minted when the host
//     boots, not when the Machine is created. A Machine with Cluster API
//     bootstrap data (spec.bootstrap.dataSecretName) gets that data
//     instead, with anvil-agent's env-file and unit added so that its
//     kubelet can be upgraded in place too (bootstrapagent.go): a second
//     part of a MIME multipart user-data for cloud-config, entries
//     appended to storage.files and systemd.units for Ignition.
//
// Neither credentials nor tokens appear in logs or errors: logs carry a
// 12-digit prefix of the credential's SHA-256 and the token ID only.
//
// Wire builds both pieces and the hooks for netboot.Options.
package delivery
