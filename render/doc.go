// Package render renders per-host provisioning configs for Anvil.
//
// A MachineClass carries a template (Butane for Fedora CoreOS / Flatcar, a raw
// Ignition JSON document, or cloud-init NoCloud files). For every boot the
// template is executed with text/template against the host's Vars (hostname,
// MACs, join parameters with a freshly minted bootstrap token, ...), translated
// by Butane where needed and validated with the Ignition config library before
// it is handed out.
//
// Every failure is a *TemplateError naming the stage, the template line and
// column and the reason, suitable to be copied verbatim into a MachineClass
// condition. Error texts never contain the secret variables (bootstrap token,
// agent credential, Vars.SecretExtra): those are scrubbed before the error is
// built.
//
// Renderer adds a bounded content-addressed cache so that a host fetching the
// same config repeatedly (Ignition retries, several NoCloud files) never runs
// the template engine or Butane twice for identical input.
package render
