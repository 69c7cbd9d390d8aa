package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Ticket conditions, reasons and annotations.
const (
	// ConditionDisabled is True on a TicketEndpoint whose receiver answered
	// 410 Gone. Deliveries wait until an admin changes the endpoint's spec.
	ConditionDisabled = "Disabled"

	ReasonGone          = "Gone"
	ReasonEnabled       = "Enabled"
	ReasonInvalidURL    = "InvalidURL"
	ReasonEndpointReady = "Ready"

	// AnnotationRedeliver on a TicketDelivery asks for it to be sent again
	// (`anvil tickets redeliver`); any new value counts once.
	AnnotationRedeliver = "metal.anvil.dev/redeliver"
)

// SecretKeyReference names one key of a Secret in the same namespace.
type SecretKeyReference struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key holding the signing secret, "whsec_" followed by base64.
	// +kubebuilder:default=secret
	// +optional
	Key string `json:"key,omitempty"`
}

// TicketEndpointSpec says where webhooks for a namespace's Machines and
// Hosts go and how they are signed.
type TicketEndpointSpec struct {
	// URL that receives the webhooks (Standard Webhooks, signed).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('https://') || self.startsWith('http://'))",message="url must be an http:// or https:// URL"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^https?://[^/]*@')",message="url must not carry credentials; the signing secret goes in secretRef"
	URL string `json:"url"`

	// SecretRef is the Secret key with the signing secret (whsec_<base64>).
	// The same secret verifies the receiver's callbacks.
	SecretRef SecretKeyReference `json:"secretRef"`

	// EventTypes this endpoint receives; empty means all.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:Enum=hardware.requested;hardware.fulfilled;hardware.cancelled;power.action_requested;power.action_cancelled;host.failed
	EventTypes []string `json:"eventTypes,omitempty"`

	// Selector limits the endpoint to Machines and Hosts with these labels;
	// empty means every one in the namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Timeout of one delivery attempt.
	// +kubebuilder:default="10s"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// TicketEndpointStatus is what Anvil observed about an endpoint.
type TicketEndpointStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Ready and Disabled. Disabled holds while its observedGeneration is
	// the endpoint's generation: editing the spec enables it again.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TicketEndpoint is a receiver of ticket webhooks (a ticketing system).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tep,categories=anvil
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TicketEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TicketEndpointSpec   `json:"spec"`
	Status TicketEndpointStatus `json:"status,omitempty"`
}

// TicketEndpointList is a list of TicketEndpoints.
// +kubebuilder:object:root=true
type TicketEndpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TicketEndpoint `json:"items"`
}

// TicketObjectReference names the Machine or Host an event is about.
type TicketObjectReference struct {
	// +kubebuilder:validation:Enum=Machine;Host
	Kind string `json:"kind"`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid"`
}

// TicketDeliverySpec is one event for one endpoint, exactly as it is sent.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
type TicketDeliverySpec struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	EndpointName string `json:"endpointName"`
	// +kubebuilder:validation:Enum=hardware.requested;hardware.fulfilled;hardware.cancelled;power.action_requested;power.action_cancelled;host.failed
	EventType string `json:"eventType"`
	// Instance tells repeated events of one type for one object apart (a
	// Host's successive power actions).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Instance string `json:"instance,omitempty"`
	// WebhookID is sent as webhook-id on every attempt.
	// +kubebuilder:validation:MaxLength=128
	WebhookID string                `json:"webhookID"`
	Object    TicketObjectReference `json:"object"`
	// Payload is the request body, fixed when the event is filed.
	// +kubebuilder:validation:MaxLength=65536
	Payload string `json:"payload"`
	// EnqueuedAt orders the deliveries of one object.
	EnqueuedAt metav1.MicroTime `json:"enqueuedAt"`
}

// TicketDeliveryState is where a delivery is.
// +kubebuilder:validation:Enum=Pending;Delivered;Failed;Superseded
type TicketDeliveryState string

const (
	TicketPending    TicketDeliveryState = "Pending"    // waiting for its turn, its next attempt or its endpoint
	TicketDelivered  TicketDeliveryState = "Delivered"  // the receiver answered 2xx
	TicketFailed     TicketDeliveryState = "Failed"     // refused (4xx) or given up; lastError says why
	TicketSuperseded TicketDeliveryState = "Superseded" // no longer worth sending (its request was cancelled)
)

// TicketDeliveryStatus is the outbox state of one delivery.
type TicketDeliveryStatus struct {
	// +optional
	State TicketDeliveryState `json:"state,omitempty"`
	// Attempts counts the requests made, including one in flight.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// +optional
	LastAttemptAt *metav1.Time `json:"lastAttemptAt,omitempty"`
	// +optional
	NextAttemptAt *metav1.Time `json:"nextAttemptAt,omitempty"`
	// +optional
	DeliveredAt *metav1.Time `json:"deliveredAt,omitempty"`
	// ResponseCode of the last answer; 0 when none came.
	// +optional
	ResponseCode int32 `json:"responseCode,omitempty"`
	// LastError is why the last attempt failed, with the first bytes of
	// the answer's body.
	// +optional
	LastError string `json:"lastError,omitempty"`
	// TicketID and TicketURL are what the receiver answered.
	// +optional
	TicketID string `json:"ticketID,omitempty"`
	// +optional
	TicketURL string `json:"ticketURL,omitempty"`
	// Redelivery is the last metal.anvil.dev/redeliver value acted on.
	// +optional
	Redelivery string `json:"redelivery,omitempty"`
}

// TicketDelivery is one webhook in Anvil's durable outbox. Its name is
// derived from the object's UID, the event type and the endpoint, so filing
// the same event twice is refused by the API server.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tdl,categories=anvil
// +kubebuilder:printcolumn:name="Event",type=string,JSONPath=`.spec.eventType`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.object.kind`,priority=1
// +kubebuilder:printcolumn:name="Object",type=string,JSONPath=`.spec.object.name`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.spec.endpointName`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=`.status.attempts`
// +kubebuilder:printcolumn:name="Code",type=integer,JSONPath=`.status.responseCode`,priority=1
// +kubebuilder:printcolumn:name="Ticket",type=string,JSONPath=`.status.ticketID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TicketDelivery struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TicketDeliverySpec   `json:"spec"`
	Status TicketDeliveryStatus `json:"status,omitempty"`
}

// TicketDeliveryList is a list of TicketDeliveries.
// +kubebuilder:object:root=true
type TicketDeliveryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TicketDelivery `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TicketEndpoint{}, &TicketEndpointList{}, &TicketDelivery{}, &TicketDeliveryList{})
}
