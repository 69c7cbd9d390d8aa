package redfishsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// registry renders Redfish messages. It uses the Base registry of the mockup
// when it has one (so message IDs and texts are those of a real registry) and
// falls back to the texts below.
type registry struct {
	prefix   string // e.g. "Base.1.5.0"
	messages map[string]regMessage
}

type regMessage struct {
	Message    string
	Severity   string
	Resolution string
}

// Fallback texts (DMTF Base registry wording) for mockups without a registry,
// and for messages newer than the mockup's registry.
var fallbackMessages = map[string]regMessage{
	"PropertyValueNotInList":          {"The value %1 for the property %2 is not in the list of acceptable values.", "Warning", "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed."},
	"PropertyUnknown":                 {"The property %1 is not in the list of valid properties for the resource.", "Warning", "Remove the unknown property from the request body and resubmit the request if the operation failed."},
	"PropertyNotWritable":             {"The property %1 is a read only property and cannot be assigned a value.", "Warning", "Remove the property from the request body and resubmit the request if the operation failed."},
	"PropertyValueTypeError":          {"The value %1 for the property %2 is of a different type than the property can accept.", "Warning", "Correct the value for the property in the request body and resubmit the request if the operation failed."},
	"PropertyMissing":                 {"The property %1 is a required property and must be included in the request.", "Warning", "Ensure that the property is in the request body and has a valid value and resubmit the request if the operation failed."},
	"MalformedJSON":                   {"The request body submitted was malformed JSON and could not be parsed by the receiving service.", "Critical", "Ensure that the request body is valid JSON and resubmit the request."},
	"NoValidSession":                  {"There is no valid session established with the implementation.", "Critical", "Establish as session before attempting any operations."},
	"ResourceAtUriUnauthorized":       {"While accessing the resource at %1, the service received an authorization error %2.", "Critical", "Ensure that the appropriate access is provided for the service in order for it to access the URI."},
	"ResourceMissingAtURI":            {"The resource at the URI %1 was not found.", "Critical", "Place a valid resource at the URI or correct the URI and resubmit the request."},
	"ActionNotSupported":              {"The action %1 is not supported by the resource.", "Critical", "The action supplied cannot be resubmitted to the implementation.  Perhaps the action was invalid, the wrong resource was the target or the implementation documentation may be of assistance."},
	"ActionParameterMissing":          {"The action %1 requires the parameter %2 to be present in the request body.", "Critical", "Supply the action with the required parameter in the request body when the request is resubmitted."},
	"ActionParameterUnknown":          {"The action %1 was submitted with the invalid parameter %2.", "Warning", "Correct the invalid parameter and resubmit the request if the operation failed."},
	"ActionParameterValueTypeError":   {"The value %1 for the parameter %2 in the action %3 is of a different type than the parameter can accept.", "Warning", "Correct the value for the parameter in the request body and resubmit the request if the operation failed."},
	"ActionParameterValueFormatError": {"The value %1 for the parameter %2 in the action %3 is of a different format than the parameter can accept.", "Warning", "Correct the value for the parameter in the request body and resubmit the request if the operation failed."},
	"ActionParameterValueNotInList":   {"The value %1 for the parameter %2 in the action %3 is not in the list of acceptable values.", "Warning", "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed."},
	"PropertyValueFormatError":        {"The value %1 for the property %2 is of a different format than the property can accept.", "Warning", "Correct the value for the property in the request body and resubmit the request if the operation failed."},
	"ActionParameterNotSupported":     {"The parameter %1 for the action %2 is not supported on the target resource.", "Warning", "Remove the parameter supplied and resubmit the request if the operation failed."},
	"ServiceTemporarilyUnavailable":   {"The service is temporarily unavailable.  Retry in %1 seconds.", "Critical", "Wait for the indicated retry duration and retry the operation."},
	"InternalError":                   {"The request failed due to an internal service error.  The service is still operational.", "Critical", "Resubmit the request.  If the problem persists, consider resetting the service."},
	"GeneralError":                    {"A general error has occurred. See Resolution for information on how to resolve the error.", "Critical", "None."},
	"SessionLimitExceeded":            {"The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.", "Critical", "Reduce the number of other sessions before trying to establish the session or increase the limit of simultaneous sessions (if supported)."},
	"ResourceInUse":                   {"The change to the requested resource failed because the resource is in use or in transition.", "Warning", "Remove the condition and resubmit the request if the operation failed."},
	"PreconditionFailed":              {"The ETag supplied did not match the ETag required to change this resource.", "Critical", "Try the operation again using the appropriate ETag."},
}

// fallbackPrefix names the registry version the fallback texts come from.
const fallbackPrefix = "Base.1.8.1"

func newRegistry(m *mockup) *registry {
	r := &registry{prefix: fallbackPrefix, messages: map[string]regMessage{}}
	for p, f := range m.files {
		if !strings.HasSuffix(p, ".json") || !strings.Contains(p, "/Registries/") {
			continue
		}
		var reg struct {
			RegistryPrefix  string
			RegistryVersion string
			Messages        map[string]regMessage
		}
		if err := json.Unmarshal(f.body, &reg); err != nil || reg.RegistryPrefix != "Base" || len(reg.Messages) == 0 {
			continue
		}
		r.prefix = reg.RegistryPrefix + "." + reg.RegistryVersion
		r.messages = reg.Messages
		break
	}
	return r
}

// message is one entry of @Message.ExtendedInfo.
type message struct {
	ODataType         string   `json:"@odata.type"`
	MessageID         string   `json:"MessageId"`
	Message           string   `json:"Message"`
	MessageArgs       []string `json:"MessageArgs"`
	RelatedProperties []string `json:"RelatedProperties,omitempty"`
	Severity          string   `json:"Severity"`
	MessageSeverity   string   `json:"MessageSeverity"`
	Resolution        string   `json:"Resolution"`
}

// msg renders a registry message. related are JSON pointers ("#/Boot/...").
func (r *registry) msg(id string, related []string, args ...string) message {
	prefix := r.prefix
	m, ok := r.messages[id]
	if !ok {
		m, prefix = fallbackMessages[id], fallbackPrefix
	}
	text := m.Message
	for i, a := range args {
		text = strings.ReplaceAll(text, fmt.Sprintf("%%%d", i+1), a)
	}
	if args == nil {
		args = []string{}
	}
	return message{
		ODataType:         "#Message.v1_1_1.Message",
		MessageID:         prefix + "." + id,
		Message:           text,
		MessageArgs:       args,
		RelatedProperties: related,
		Severity:          m.Severity,
		MessageSeverity:   m.Severity,
		Resolution:        m.Resolution,
	}
}

// writeError writes a Redfish error response: the first message's ID is the
// error code, or GeneralError when there are several.
func writeError(w http.ResponseWriter, status int, msgs ...message) {
	code, text := msgs[0].MessageID, msgs[0].Message
	if len(msgs) > 1 {
		code = strings.TrimSuffix(msgs[0].MessageID, "."+lastDot(msgs[0].MessageID)) + ".GeneralError"
		text = "A general error has occurred. See ExtendedInfo for more information."
	}
	body := map[string]any{
		"error": map[string]any{
			"code":                  code,
			"message":               text,
			"@Message.ExtendedInfo": msgs,
		},
	}
	writeJSON(w, status, body)
}

func lastDot(s string) string {
	if i := strings.LastIndex(s, "."); i >= 0 {
		return s[i+1:]
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
