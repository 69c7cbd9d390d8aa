// Package token mints, refreshes and revokes kubelet bootstrap tokens.
//
// A bootstrap token "<id>.<secret>" ([a-z0-9]{6}.[a-z0-9]{16}) is a Secret
// of type bootstrap.kubernetes.io/token named bootstrap-token-<id> in
// kube-system. With --enable-bootstrap-token-auth the API server
// authenticates it as user system:bootstrap:<id> in the groups
// system:bootstrappers and those in auth-extra-groups, until its expiration.
//
// Anvil mints one per boot, when the host fetches its config, with a short
// TTL that is refreshed while the host joins and the token is revoked once
// the Node exists. Labels and annotations on the Secret name the Host and the
// Machine, so the CSR approver can tell which Machine a
// system:bootstrap:<id> request belongs to (Lookup).
package token

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

const (
	// DefaultTTL is the lifetime of a minted token unless MintOptions.TTL is set.
	DefaultTTL = 15 * time.Minute
	// Namespace is where the API server's bootstrap token authenticator looks.
	Namespace = metav1.NamespaceSystem
	// AnvilGroup is always added to auth-extra-groups, so RBAC for node
	// bootstrap can be granted to Anvil's tokens specifically.
	AnvilGroup = "system:bootstrappers:anvil"
	// KubeadmGroup is kubeadm's default node token group; added with
	// MintOptions.KubeadmGroup for clusters whose RBAC was set up by kubeadm.
	KubeadmGroup = "system:bootstrappers:kubeadm:default-node-token"

	// LabelManagedBy marks Secrets created by this package; Lookup, Refresh
	// and Revoke refuse tokens without it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the LabelManagedBy value.
	ManagedByValue = "anvil"
	// LabelHostUID and LabelMachineUID carry the owners' UIDs (valid label
	// values), so tokens can be selected by owner.
	LabelHostUID    = "metal.anvil.dev/host-uid"
	LabelMachineUID = "metal.anvil.dev/machine-uid"
	// AnnotationHost and AnnotationMachine carry "namespace/name" of the
	// owners (names can exceed the 63 characters of a label value).
	AnnotationHost    = "metal.anvil.dev/host"
	AnnotationMachine = "metal.anvil.dev/machine"
)

var (
	// ErrNotFound: no bootstrap token Secret with that ID.
	ErrNotFound = errors.New("bootstrap token not found")
	// ErrNotManaged: the token exists but was not minted by Anvil.
	ErrNotManaged = errors.New("bootstrap token is not managed by anvil")
	// ErrExpired: the token already expired; mint a new one.
	ErrExpired = errors.New("bootstrap token expired")
	// ErrInvalidID: not a bootstrap token ID ([a-z0-9]{6}).
	ErrInvalidID = errors.New("invalid bootstrap token id")
)

// ObjectRef names a Kubernetes object.
type ObjectRef struct {
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

func (r ObjectRef) isZero() bool { return r.Name == "" && r.UID == "" }

// Owner is what a token was minted for.
type Owner struct {
	Host    ObjectRef `json:"host"`
	Machine ObjectRef `json:"machine"`
}

// MintOptions describe a token to mint.
type MintOptions struct {
	// Owner is required: at least the Host or the Machine must be named.
	Owner Owner
	// TTL is the token's lifetime (DefaultTTL if 0).
	TTL time.Duration
	// Description is stored in the token; a default naming the owner is used if empty.
	Description string
	// Signing sets usage-bootstrap-signing (off unless asked: Anvil hands
	// nodes the CA directly and does not need signed cluster-info).
	Signing bool
	// KubeadmGroup adds KubeadmGroup to the extra groups.
	KubeadmGroup bool
	// ExtraGroups are added to auth-extra-groups; each must match
	// system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9].
	ExtraGroups []string
	// Now returns the current time (time.Now if nil); the expiration is Now()+TTL.
	Now func() time.Time
}

// Token is a minted bootstrap token. Formatting it in any way (%v, %+v,
// %#v, %s, JSON, logr) shows only the ID; Value returns the bearer token.
type Token struct {
	ID         string
	Expiration time.Time
	Owner      Owner
	secret     string
}

// Value returns the full bearer token "<id>.<secret>".
func (t Token) Value() string { return bootstraputil.TokenFromIDAndSecret(t.ID, t.secret) }

// SecretName is the name of the token's Secret in kube-system.
func (t Token) SecretName() string { return bootstraputil.BootstrapTokenSecretName(t.ID) }

// Username is the user the API server authenticates the token as.
func (t Token) Username() string { return bootstrapapi.BootstrapUserPrefix + t.ID }

// String redacts the secret part.
func (t Token) String() string { return t.ID + ".<redacted>" }

// GoString redacts the secret part for %#v.
func (t Token) GoString() string {
	return "token.Token{ID:" + fmt.Sprintf("%q", t.ID) + ", secret:<redacted>}"
}

// Format makes every fmt verb print the redacted form; without it, verbs
// such as %d would print the unexported fields.
func (t Token) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, t.GoString())
		return
	}
	fmt.Fprint(f, t.String())
}

// MarshalJSON redacts the secret part.
func (t Token) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf("%q", t.String())), nil }

// MarshalLog implements logr.Marshaler with the redacted form.
func (t Token) MarshalLog() any { return t.String() }

// Info is what Lookup and List report about a token; it never holds the secret.
type Info struct {
	ID          string
	Owner       Owner
	Expiration  time.Time
	Description string
	Usages      []string
	Groups      []string
}

// Mint creates a new bootstrap token for opts.Owner.
func Mint(ctx context.Context, c kubernetes.Interface, opts MintOptions) (Token, error) {
	if opts.Owner.Host.isZero() && opts.Owner.Machine.isZero() {
		return Token{}, errors.New("minting bootstrap token: owner host or machine is required")
	}
	groups := []string{AnvilGroup}
	if opts.KubeadmGroup {
		groups = append(groups, KubeadmGroup)
	}
	for _, g := range opts.ExtraGroups {
		if err := bootstraputil.ValidateBootstrapGroupName(g); err != nil {
			return Token{}, fmt.Errorf("minting bootstrap token: %w", err)
		}
		if !contains(groups, g) {
			groups = append(groups, g)
		}
	}
	ttl := opts.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	desc := opts.Description
	if desc == "" {
		desc = "anvil kubelet bootstrap token"
		if !opts.Owner.Machine.isZero() {
			desc += " for Machine " + opts.Owner.Machine.String()
		}
		if !opts.Owner.Host.isZero() {
			desc += " on Host " + opts.Owner.Host.String()
		}
	}
	signing := "false"
	if opts.Signing {
		signing = "true"
	}

	// IDs are 6 characters of [a-z0-9] (~2 billion values); retry the rare
	// collision with an existing token a few times.
	const attempts = 5
	for i := 0; i < attempts; i++ {
		raw, err := bootstraputil.GenerateBootstrapToken()
		if err != nil {
			return Token{}, fmt.Errorf("minting bootstrap token: %w", err)
		}
		id, secret, _ := strings.Cut(raw, ".")
		exp := now().Add(ttl).UTC().Truncate(time.Second)
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:        bootstraputil.BootstrapTokenSecretName(id),
				Namespace:   Namespace,
				Labels:      ownerLabels(opts.Owner),
				Annotations: ownerAnnotations(opts.Owner),
			},
			Type: bootstrapapi.SecretTypeBootstrapToken,
			Data: map[string][]byte{
				bootstrapapi.BootstrapTokenIDKey:               []byte(id),
				bootstrapapi.BootstrapTokenSecretKey:           []byte(secret),
				bootstrapapi.BootstrapTokenExpirationKey:       []byte(exp.Format(time.RFC3339)),
				bootstrapapi.BootstrapTokenDescriptionKey:      []byte(desc),
				bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
				bootstrapapi.BootstrapTokenUsageSigningKey:     []byte(signing),
				bootstrapapi.BootstrapTokenExtraGroupsKey:      []byte(strings.Join(groups, ",")),
			},
		}
		_, err = c.CoreV1().Secrets(Namespace).Create(ctx, s, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return Token{}, redact(fmt.Errorf("minting bootstrap token %s: %w", id, err), secret)
		}
		return Token{ID: id, Expiration: exp, Owner: opts.Owner, secret: secret}, nil
	}
	return Token{}, fmt.Errorf("minting bootstrap token: %d ID collisions in a row", attempts)
}

// Refresh moves a token's expiration to now+ttl (never earlier than it is),
// to keep it alive while its host is still joining. An expired token is not
// revived: that returns ErrExpired.
func Refresh(ctx context.Context, c kubernetes.Interface, id string, ttl time.Duration) (time.Time, error) {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	var newExp time.Time
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := getManaged(ctx, c, id)
		if err != nil {
			return err
		}
		now := time.Now()
		cur, err := expiration(s)
		if err != nil {
			return fmt.Errorf("bootstrap token %s: %w", id, err)
		}
		if !cur.IsZero() && !now.Before(cur) {
			return fmt.Errorf("bootstrap token %s: %w", id, ErrExpired)
		}
		newExp = now.Add(ttl).UTC().Truncate(time.Second)
		if !cur.IsZero() && !newExp.After(cur) {
			newExp = cur
			return nil
		}
		s = s.DeepCopy()
		s.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(newExp.Format(time.RFC3339))
		_, err = c.CoreV1().Secrets(Namespace).Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("refreshing bootstrap token %s: %w", id, err)
	}
	return newExp, nil
}

// Revoke deletes a token. Revoking a token that no longer exists is not an
// error (Node joined and cleanup raced, or the API server's token cleaner
// removed it after expiry).
func Revoke(ctx context.Context, c kubernetes.Interface, id string) error {
	s, err := getManaged(ctx, c, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("revoking bootstrap token %s: %w", id, err)
	}
	// Precondition on UID: never delete a same-named token minted since.
	err = c.CoreV1().Secrets(Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &s.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("revoking bootstrap token %s: %w", id, err)
	}
	return nil
}

// Lookup returns what is known about a token, in particular its Owner. A
// CSR approver calls it with the ID from the requesting username
// system:bootstrap:<id> (see IDFromUsername).
func Lookup(ctx context.Context, c kubernetes.Interface, id string) (Info, error) {
	s, err := getManaged(ctx, c, id)
	if err != nil {
		return Info{}, fmt.Errorf("looking up bootstrap token %s: %w", id, err)
	}
	return info(s)
}

// ListOptions select tokens by owner; empty fields match everything.
type ListOptions struct {
	HostUID    types.UID
	MachineUID types.UID
}

// List returns Anvil's tokens matching opts, for example to revoke every
// token of a Machine once its Node joined.
func List(ctx context.Context, c kubernetes.Interface, opts ListOptions) ([]Info, error) {
	sel := labels.Set{LabelManagedBy: ManagedByValue}
	if opts.HostUID != "" {
		sel[LabelHostUID] = string(opts.HostUID)
	}
	if opts.MachineUID != "" {
		sel[LabelMachineUID] = string(opts.MachineUID)
	}
	l, err := c.CoreV1().Secrets(Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: sel.String(),
		FieldSelector: "type=" + string(bootstrapapi.SecretTypeBootstrapToken),
	})
	if err != nil {
		return nil, fmt.Errorf("listing bootstrap tokens: %w", err)
	}
	var out []Info
	for i := range l.Items {
		inf, err := info(&l.Items[i])
		if err != nil {
			continue // malformed token Secret; not ours to judge here
		}
		out = append(out, inf)
	}
	return out, nil
}

// IDFromUsername returns the token ID of a "system:bootstrap:<id>" username.
func IDFromUsername(username string) (string, bool) {
	id, ok := strings.CutPrefix(username, bootstrapapi.BootstrapUserPrefix)
	if !ok || !bootstraputil.IsValidBootstrapTokenID(id) {
		return "", false
	}
	return id, true
}

// CACertHash returns kubeadm's discovery hash of a CA certificate:
// "sha256:" and the hex SHA-256 of its DER SubjectPublicKeyInfo. pemBytes
// holds the certificate; the first CERTIFICATE block is used.
func CACertHash(pemBytes []byte) (string, error) {
	rest := pemBytes
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return "", errors.New("CA cert hash: no CERTIFICATE PEM block found")
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return "", fmt.Errorf("CA cert hash: %w", err)
		}
		sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
		return "sha256:" + hex.EncodeToString(sum[:]), nil
	}
}

func getManaged(ctx context.Context, c kubernetes.Interface, id string) (*corev1.Secret, error) {
	if !bootstraputil.IsValidBootstrapTokenID(id) {
		return nil, ErrInvalidID
	}
	s, err := c.CoreV1().Secrets(Namespace).Get(ctx, bootstraputil.BootstrapTokenSecretName(id), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if s.Type != bootstrapapi.SecretTypeBootstrapToken || s.Labels[LabelManagedBy] != ManagedByValue {
		return nil, ErrNotManaged
	}
	return s, nil
}

func expiration(s *corev1.Secret) (time.Time, error) {
	v := string(s.Data[bootstrapapi.BootstrapTokenExpirationKey])
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad expiration %q: %w", v, err)
	}
	return t, nil
}

func info(s *corev1.Secret) (Info, error) {
	exp, err := expiration(s)
	if err != nil {
		return Info{}, err
	}
	inf := Info{
		ID:          string(s.Data[bootstrapapi.BootstrapTokenIDKey]),
		Expiration:  exp,
		Description: string(s.Data[bootstrapapi.BootstrapTokenDescriptionKey]),
		Owner:       ownerFrom(s),
	}
	for k, v := range s.Data {
		if strings.HasPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix) && string(v) == "true" {
			inf.Usages = append(inf.Usages, strings.TrimPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix))
		}
	}
	if g := string(s.Data[bootstrapapi.BootstrapTokenExtraGroupsKey]); g != "" {
		inf.Groups = strings.Split(g, ",")
	}
	return inf, nil
}

func ownerLabels(o Owner) map[string]string {
	l := map[string]string{LabelManagedBy: ManagedByValue}
	if o.Host.UID != "" {
		l[LabelHostUID] = string(o.Host.UID)
	}
	if o.Machine.UID != "" {
		l[LabelMachineUID] = string(o.Machine.UID)
	}
	return l
}

func ownerAnnotations(o Owner) map[string]string {
	a := map[string]string{}
	if o.Host.Name != "" {
		a[AnnotationHost] = o.Host.String()
	}
	if o.Machine.Name != "" {
		a[AnnotationMachine] = o.Machine.String()
	}
	return a
}

func ownerFrom(s *corev1.Secret) Owner {
	parse := func(v string, uid string) ObjectRef {
		r := ObjectRef{UID: types.UID(uid)}
		if ns, name, ok := strings.Cut(v, "/"); ok {
			r.Namespace, r.Name = ns, name
		} else {
			r.Name = v
		}
		return r
	}
	return Owner{
		Host:    parse(s.Annotations[AnnotationHost], s.Labels[LabelHostUID]),
		Machine: parse(s.Annotations[AnnotationMachine], s.Labels[LabelMachineUID]),
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// redact makes sure an error never carries the token secret, even if the
// API server echoed it.
func redact(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), secret, "<redacted>"))
}
