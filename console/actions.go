package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"anvil.dev/anvil/ops"
)

// actionResult is what an action answers (JSON): a line for the person,
// and for a preview the HTML of its table.
type actionResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	HTML    string `json:"html,omitempty"`
}

// action runs one admin action as the signed-in person: the same API
// write the CLI makes (package ops), with their credentials, so RBAC
// decides. Every action is logged with who asked and what came of it.
func (s *Server) action(w http.ResponseWriter, r *http.Request) {
	sess := s.sessions.get(r)
	if sess == nil {
		writeJSON(w, http.StatusUnauthorized, actionResult{Message: "your session ended; sign in again"})
		return
	}
	if !validCSRF(sess, r) {
		writeJSON(w, http.StatusForbidden, actionResult{Message: "missing or wrong CSRF token; reload the page"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, actionResult{Message: "the form could not be read"})
		return
	}
	k, a := r.PathValue("kind"), r.PathValue("action")
	key := types.NamespacedName{Namespace: r.PathValue("ns"), Name: r.PathValue("name")}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	res, err := s.do(ctx, sess, k, a, key, r)
	what := fmt.Sprintf("%s %s/%s", a, k, key)
	if op := r.PostForm.Get("op"); op != "" {
		what += " " + op
	}
	if err != nil {
		status, msg := actionError(sess, k, key, err)
		s.cfg.Log.Info("console action failed", "user", sess.user, "action", what, "error", msg)
		writeJSON(w, status, actionResult{Message: msg})
		return
	}
	s.cfg.Log.Info("console action", "user", sess.user, "action", what, "result", res.Message)
	res.OK = true
	writeJSON(w, http.StatusOK, res)
}

// errUnknownAction is a path no action has.
type errUnknownAction string

func (e errUnknownAction) Error() string { return string(e) }

func (s *Server) do(ctx context.Context, sess *session, k, a string, key types.NamespacedName, r *http.Request) (actionResult, error) {
	c := sess.c
	version := strings.TrimSpace(r.PostForm.Get("version"))
	var msg string
	var err error
	switch k + "/" + a {
	case "hosts/power":
		switch op := r.PostForm.Get("op"); op {
		case "on", "off":
			msg, err = ops.SetOnline(ctx, c, key, op == "on")
		case "cycle":
			msg, err = ops.PowerCycle(ctx, c, key)
		default:
			return actionResult{}, errUnknownAction(fmt.Sprintf("op %q: want on, off or cycle", op))
		}
	case "hosts/ack-power":
		msg, err = ops.AckPower(ctx, c, key)
	case "machines/preview", "machinesets/preview":
		return s.preview(ctx, sess, k, key, version)
	case "machines/upgrade":
		if err := ops.ValidVersion(version); err != nil {
			return actionResult{}, err
		}
		msg, err = ops.UpgradeMachine(ctx, c, key, version)
	case "machinesets/upgrade":
		if err := ops.ValidVersion(version); err != nil {
			return actionResult{}, err
		}
		msg, err = ops.UpgradeMachineSet(ctx, c, key, version)
	case "machines/retry":
		msg, err = ops.RetryUpgrade(ctx, c, key)
	case "machinesets/resume":
		var b bytes.Buffer
		err = ops.ResumeMachineSet(ctx, c, key, r.PostForm.Get("retryFailed") == "1", &b)
		msg = strings.TrimSpace(b.String())
	default:
		return actionResult{}, errUnknownAction(fmt.Sprintf("no action %s on %s", a, k))
	}
	return actionResult{Message: msg}, err
}

type previewData struct {
	Kind, Name, Namespace, Version string
	Rows                           []ops.MachinePreview
	Startable                      bool
}

// preview says, per Machine, whether an upgrade to version is done in
// place or by replacement and why, with the skew check's verdict, before
// anything is written.
func (s *Server) preview(ctx context.Context, sess *session, k string, key types.NamespacedName, version string) (actionResult, error) {
	if err := ops.ValidVersion(version); err != nil {
		return actionResult{}, err
	}
	api, err := sess.apiVersion()
	if err != nil {
		return actionResult{}, fmt.Errorf("reading the API server's version for the skew check: %w", err)
	}
	d := previewData{Kind: k, Name: key.Name, Namespace: key.Namespace, Version: version}
	if k == "machines" {
		p, err := ops.PreviewMachineUpgrade(ctx, sess.c, api, key, version)
		if err != nil {
			return actionResult{}, err
		}
		d.Rows = []ops.MachinePreview{p}
	} else {
		if d.Rows, err = ops.PreviewMachineSetUpgrade(ctx, sess.c, api, key, version); err != nil {
			return actionResult{}, err
		}
	}
	for _, p := range d.Rows {
		if p.Mode == ops.ModeInPlace || p.Mode == ops.ModeWaiting || p.Mode == ops.ModeReplacement {
			d.Startable = true
		}
	}
	if k == "machines" && len(d.Rows) == 1 && d.Rows[0].Mode == ops.ModeRefused {
		d.Startable = false
	}
	h, err := s.renderTemplate("preview", d)
	if err != nil {
		return actionResult{}, err
	}
	return actionResult{Message: fmt.Sprintf("preview of %s %s to %s", strings.TrimSuffix(k, "s"), key.Name, version), HTML: string(h)}, nil
}

// actionError turns an error into a status and a line that says what to
// do: RBAC refusals name the person and the object.
func actionError(sess *session, k string, key types.NamespacedName, err error) (int, string) {
	switch {
	case apierrors.IsForbidden(err):
		return http.StatusForbidden, fmt.Sprintf("refused by RBAC: %s may not change %s %s in namespace %s (the API server said: %s)",
			sess.user, strings.TrimSuffix(k, "s"), key.Name, key.Namespace, apiMessage(err))
	case apierrors.IsUnauthorized(err):
		return http.StatusUnauthorized, "the API server no longer accepts your token; sign in again"
	case apierrors.IsNotFound(err):
		return http.StatusNotFound, apiMessage(err)
	case apierrors.IsConflict(err):
		return http.StatusConflict, "someone changed it meanwhile; try again: " + apiMessage(err)
	}
	if _, ok := err.(errUnknownAction); ok {
		return http.StatusNotFound, err.Error()
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return http.StatusBadGateway, apiMessage(err)
	}
	// ops' own validation: the message says what to fix.
	return http.StatusUnprocessableEntity, err.Error()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
