package handlers

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"

	"github.com/bougou/go-ipmi/pkg/bmc"
	"github.com/bougou/go-ipmi/pkg/types"
)

func TestHandleGetChannelAuthCapsAdvertisesV15AndV20(t *testing.T) {
	b := newTestBMC()
	resp, cc, err := handleGetChannelAuthCaps(context.Background(), &HandlerContext{BMC: b}, []byte{0x8e, 0x04})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if cc != types.CodeOK {
		t.Fatalf("want types.CodeNormal, got %d", cc)
	}
	if resp[1]&0x04 == 0 {
		t.Fatalf("expected MD5 auth type advertised, byte=0x%02x", resp[1])
	}
	if resp[3]&0x01 == 0 {
		t.Fatalf("expected IPMI v1.5 connection support, byte=0x%02x", resp[3])
	}
	if resp[3]&0x02 == 0 {
		t.Fatalf("expected IPMI v2.0 connection support, byte=0x%02x", resp[3])
	}
}

func TestHandleGetSessionChallenge(t *testing.T) {
	b := newTestBMC()
	user, err := b.Users.Add(2, "ADMIN")
	if err != nil {
		t.Fatalf("add user: %v", err)
	}
	user.SetPassword([]byte("ADMIN"))
	user.Enabled = true
	user.ChannelAccess[lanChannelNumber] = bmc.UserChannelAccess{
		MaxPrivilege: bmc.PrivilegeLevelAdministrator,
		Enabled:      true,
	}

	req := make([]byte, 17)
	req[0] = uint8(bmc.V15AuthTypeMD5)
	copy(req[1:], []byte("ADMIN"))

	resp, cc, err := handleGetSessionChallenge(context.Background(), &HandlerContext{BMC: b}, req)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if cc != types.CodeOK {
		t.Fatalf("want types.CodeNormal, got %d", cc)
	}
	if len(resp) != 20 {
		t.Fatalf("want 20 response bytes, got %d", len(resp))
	}
	tempID := binary.LittleEndian.Uint32(resp[0:4])
	if tempID == 0 {
		t.Fatal("expected non-zero temporary session ID")
	}
	sess, err := b.V15Sessions.Get(tempID)
	if err != nil {
		t.Fatalf("pending session not found: %v", err)
	}
	if sess.State != bmc.V15SessionStatePending {
		t.Fatalf("want pending state, got %v", sess.State)
	}
	if !bytes.Equal(sess.Challenge[:], resp[4:20]) {
		t.Fatal("challenge mismatch")
	}
}

func TestV15SessionActivationFlow(t *testing.T) {
	b := newTestBMC()
	user, err := b.Users.Add(2, "ADMIN")
	if err != nil {
		t.Fatalf("add user: %v", err)
	}
	user.SetPassword([]byte("ADMIN"))
	user.Enabled = true
	user.ChannelAccess[lanChannelNumber] = bmc.UserChannelAccess{
		MaxPrivilege: bmc.PrivilegeLevelAdministrator,
		Enabled:      true,
	}

	challengeReq := make([]byte, 17)
	challengeReq[0] = uint8(bmc.V15AuthTypeMD5)
	copy(challengeReq[1:], []byte("ADMIN"))
	challengeResp, cc, err := handleGetSessionChallenge(context.Background(), &HandlerContext{BMC: b}, challengeReq)
	if err != nil || cc != types.CodeOK {
		t.Fatalf("GetSessionChallenge: cc=%d err=%v", cc, err)
	}
	tempID := binary.LittleEndian.Uint32(challengeResp[0:4])
	sess, _ := b.V15Sessions.Get(tempID)

	activateReq := make([]byte, 22)
	activateReq[0] = uint8(bmc.V15AuthTypeMD5)
	activateReq[1] = uint8(bmc.PrivilegeLevelAdministrator)
	copy(activateReq[2:18], challengeResp[4:20])
	binary.LittleEndian.PutUint32(activateReq[18:22], 0x01020304)

	hctx := &HandlerContext{BMC: b, V15Session: sess, User: user}
	activateResp, cc, err := handleActivateSession(context.Background(), hctx, activateReq)
	if err != nil || cc != types.CodeOK {
		t.Fatalf("ActivateSession: cc=%d err=%v", cc, err)
	}
	if len(activateResp) != 10 {
		t.Fatalf("want 10-byte response, got %d", len(activateResp))
	}
	permID := binary.LittleEndian.Uint32(activateResp[1:5])
	if permID == 0 || permID == tempID {
		t.Fatalf("unexpected permanent session ID: 0x%08x", permID)
	}
	got, err := b.V15Sessions.Get(permID)
	if err != nil {
		t.Fatalf("active session not found: %v", err)
	}
	if got.State != bmc.V15SessionStateActive {
		t.Fatalf("want active state, got %v", got.State)
	}
	if got.PrivilegeLevel != bmc.PrivilegeLevelUser {
		t.Fatalf("initial privilege want USER, got %v", got.PrivilegeLevel)
	}
	if got.MaxPrivilege != bmc.PrivilegeLevelAdministrator {
		t.Fatalf("max privilege want ADMIN, got %v", got.MaxPrivilege)
	}
	if got.OutboundSeq != 0x01020304 {
		t.Fatalf("outbound seq: want 0x01020304, got 0x%08x", got.OutboundSeq)
	}
	returnedInbound := binary.LittleEndian.Uint32(activateResp[5:9])
	if returnedInbound == 0 {
		t.Fatal("Activate Session must return a non-zero starting inbound seq")
	}
	if got.InboundSeq != returnedInbound-1 {
		t.Fatalf("InboundSeq high-water: want 0x%08x (returned-1), got 0x%08x", returnedInbound-1, got.InboundSeq)
	}
	if !bmc.V15InboundSeqValid(got, returnedInbound) {
		t.Fatalf("returned inbound seq 0x%08x must be acceptable as the first console packet", returnedInbound)
	}
}

func TestActivateSessionRejectsChallengeMismatch(t *testing.T) {
	b := newTestBMC()
	user, err := b.Users.Add(2, "ADMIN")
	if err != nil {
		t.Fatalf("add user: %v", err)
	}
	user.SetPassword([]byte("ADMIN"))
	user.Enabled = true
	user.ChannelAccess[lanChannelNumber] = bmc.UserChannelAccess{
		MaxPrivilege: bmc.PrivilegeLevelAdministrator,
		Enabled:      true,
	}

	challengeReq := make([]byte, 17)
	challengeReq[0] = uint8(bmc.V15AuthTypeMD5)
	copy(challengeReq[1:], []byte("ADMIN"))
	challengeResp, cc, err := handleGetSessionChallenge(context.Background(), &HandlerContext{BMC: b}, challengeReq)
	if err != nil || cc != types.CodeOK {
		t.Fatalf("GetSessionChallenge: cc=%d err=%v", cc, err)
	}
	tempID := binary.LittleEndian.Uint32(challengeResp[0:4])
	sess, _ := b.V15Sessions.Get(tempID)

	activateReq := make([]byte, 22)
	activateReq[0] = uint8(bmc.V15AuthTypeMD5)
	activateReq[1] = uint8(bmc.PrivilegeLevelAdministrator)
	copy(activateReq[2:18], challengeResp[4:20])
	activateReq[2] ^= 0xff // corrupt challenge
	binary.LittleEndian.PutUint32(activateReq[18:22], 0x01020304)

	hctx := &HandlerContext{BMC: b, V15Session: sess, User: user}
	_, cc, err = handleActivateSession(context.Background(), hctx, activateReq)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if cc != CCV15InvalidSessionID {
		t.Fatalf("want invalid session id, got cc=%d", cc)
	}
}

func TestV15InboundSeqValid(t *testing.T) {
	tests := []struct {
		high, rcvd, seq uint32
		want            bool
	}{
		{100, 1, 101, true},
		{100, 1, 108, true},
		{100, 1, 109, false},
		{100, 1, 100, false},
		{100, 1, 0, false},
		{100, 1, 95, true},
		{100, 1, 92, true},
		{100, 1, 91, false},
	}
	for _, tc := range tests {
		sess := &bmc.V15Session{InboundSeq: tc.high, InboundRcvd: uint8(tc.rcvd)}
		got := bmc.V15InboundSeqValid(sess, tc.seq)
		if got != tc.want {
			t.Errorf("V15InboundSeqValid(high=%d, seq=%d) = %v, want %v", tc.high, tc.seq, got, tc.want)
		}
	}
}

func TestV15InboundSeqDuplicateRejected(t *testing.T) {
	sess := &bmc.V15Session{InboundSeq: 100, InboundRcvd: 1}
	if !sess.TryAcceptInboundSeq(101) {
		t.Fatal("expected first accept")
	}
	if sess.TryAcceptInboundSeq(101) {
		t.Fatal("duplicate seq should be rejected")
	}
}

// TestLookupV15UserValidatesNameOnly proves Get Session Challenge's user
// lookup succeeds for a valid, enabled name regardless of the stored password
// size: it validates the name and channel access, not the credential class.
// The 20-byte-password rejection (spec v2.0§22.30) is enforced later, at the
// AuthCode verification during Activate Session, so it does not masquerade here
// as an "invalid user name".
func TestLookupV15UserValidatesNameOnly(t *testing.T) {
	b := newTestBMC()
	user, err := b.Users.Add(2, "op20")
	if err != nil {
		t.Fatal(err)
	}
	user.SetPassword([]byte("abcdefghijklmnopqrst")) // 20 bytes -> Password20
	user.Enabled = true
	user.ChannelAccess[lanChannelNumber] = bmc.UserChannelAccess{
		MaxPrivilege: bmc.PrivilegeLevelAdministrator,
		Enabled:      true,
	}

	uname := make([]byte, 16)
	copy(uname, "op20")
	if _, cc, ok := lookupV15User(b, uname, lanChannelNumber); !ok {
		t.Fatalf("valid name rejected at lookup, cc=0x%02x", cc)
	}
}

// TestLookupV15NullUserCoveredByCredentialGate guards the null-user (User 1)
// path, the case the fix's second half is about. A null username resolves to
// User 1 and the lookup accepts it (the anonymous name is valid), so the
// 20-byte rejection cannot live in the lookup; it must come from the shared
// credential gate. This asserts both halves: the null lookup returns User 1,
// and [V15Usable] rejects that User 1 when it carries a 20-byte password, which
// is exactly what the single auth chokepoint applies to the session's user.
func TestLookupV15NullUserCoveredByCredentialGate(t *testing.T) {
	b := newTestBMC()
	if err := b.Users.Update(1, func(u *bmc.User) error {
		u.SetPassword([]byte("abcdefghijklmnopqrst")) // 20 bytes -> Password20
		u.Enabled = true
		u.ChannelAccess[lanChannelNumber] = bmc.UserChannelAccess{
			MaxPrivilege: bmc.PrivilegeLevelAdministrator,
			Enabled:      true,
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	nullName := make([]byte, 16) // all zeros = null user (User 1)
	user, cc, ok := lookupV15User(b, nullName, lanChannelNumber)
	if !ok {
		t.Fatalf("null-user lookup rejected, cc=0x%02x", cc)
	}
	if user.ID != 1 {
		t.Fatalf("null user resolved to slot %d, want User 1", user.ID)
	}
	if V15Usable(user) {
		t.Fatal("null User 1 with a 20-byte password must not be v1.5-usable")
	}
}

// TestV15Usable pins the v1.5 credential-class gate: a 20-byte-password account
// (and a nil user) cannot authenticate a v1.5 session, a 16-byte one can.
func TestV15Usable(t *testing.T) {
	if V15Usable(nil) {
		t.Error("nil user must not be v1.5-usable")
	}

	u := &bmc.User{}
	u.SetPassword([]byte("s3cr3t")) // <=16 bytes: 16-byte class
	if !V15Usable(u) {
		t.Error("16-byte-password user must be v1.5-usable")
	}

	u.SetPassword([]byte("abcdefghijklmnopqrst")) // >16 bytes: 20-byte class
	if V15Usable(u) {
		t.Error("20-byte-password user must not be v1.5-usable")
	}
}
