package configserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/boot/bootcred"
)

// serveInstall answers the installer's two POSTs once the credential
// checked out (unspent). Bodies are bounded JSON; answers are JSON too.
func (h *Handler) serveInstall(w http.ResponseWriter, r *http.Request, rt route, rec bootcred.Record, log logr.Logger) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, agent.MaxBodyBytes))
	if err != nil {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "body larger than agent.MaxBodyBytes")
		return
	}
	switch rt.kind {
	case kindInstall:
		var req agent.InstallRequest
		if err := json.Unmarshal(body, &req); err != nil {
			writeJSONError(w, http.StatusBadRequest, "install request: "+err.Error())
			return
		}
		if len(req.Disks) > agent.MaxListLen || len(req.BootID) > agent.MaxStringLen {
			writeJSONError(w, http.StatusBadRequest, "install request: too many disks or bootID too long")
			return
		}
		plan, err := h.opts.Installs.InstallPlan(r.Context(), rec.Host, rt.mac, rt.cred, req)
		if err != nil {
			h.installError(w, r, err, log)
			return
		}
		if err := plan.Validate(); err != nil {
			h.failed.WithLabelValues("source").Inc()
			log.Error(err, "install plan is invalid")
			writeJSONError(w, http.StatusInternalServerError, "Anvil built an invalid install plan; see its log")
			return
		}
		h.served.WithLabelValues(kindInstall).Inc()
		// The plan's seed URL carries the credential: log the device only.
		log.Info("install plan served", "device", plan.Device, "imageSHA256", plan.Image.SHA256, "disks", len(req.Disks))
		writeJSON(w, http.StatusOK, plan)
	case kindInstallResult:
		var res agent.InstallResult
		if err := json.Unmarshal(body, &res); err != nil {
			writeJSONError(w, http.StatusBadRequest, "install result: "+err.Error())
			return
		}
		if err := res.Validate(); err != nil {
			writeJSONError(w, http.StatusBadRequest, "install result: "+err.Error())
			return
		}
		if err := h.opts.Installs.InstallResult(r.Context(), rec.Host, rt.mac, res); err != nil {
			h.installError(w, r, err, log)
			return
		}
		h.served.WithLabelValues(kindInstallResult).Inc()
		log.Info("install result recorded", "outcome", res.Outcome, "reason", res.Reason, "device", res.Device, "bytes", res.BytesWritten)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (h *Handler) installError(w http.ResponseWriter, r *http.Request, err error, log logr.Logger) {
	var refusal *InstallRefusal
	switch {
	case errors.As(err, &refusal):
		h.failed.WithLabelValues("install_refused").Inc()
		log.Info("install refused", "reason", refusal.Reason, "message", refusal.Message)
		writeJSONError(w, http.StatusUnprocessableEntity, refusal.Message)
	case errors.Is(err, ErrNoConfig):
		h.failed.WithLabelValues("not_found").Inc()
		log.V(1).Info("no install for request", "err", err.Error())
		http.NotFound(w, r)
	default:
		h.failed.WithLabelValues("source").Inc()
		log.Error(err, "answering the installer")
		writeJSONError(w, http.StatusServiceUnavailable, "Anvil could not answer now; retry")
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeJSONError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, agent.ErrorResponse{Error: msg})
}
