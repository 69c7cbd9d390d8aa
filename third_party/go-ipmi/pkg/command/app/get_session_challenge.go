package app

import (
	"fmt"

	"github.com/bougou/go-ipmi/pkg/types"
)

// v1.5§18.14 / v2.0§22.16 Get Session Challenge. Selects which BMC-supported authentication type
// the remote console wants to use, and a username that selects user information
// for the session.
type GetSessionChallengeRequest struct {
	// Authentication Type for Challenge
	// indicating what type of authentication type the console wants to use.
	AuthType types.AuthType

	// Sixteen-bytes. All 0s for null user name (User 1)
	Username [16]byte
}

type GetSessionChallengeResponse struct {
	TemporarySessionID uint32 // LS byte first
	Challenge          [16]byte
}

func (req *GetSessionChallengeRequest) Command() types.Command {
	return types.CommandGetSessionChallenge
}

func (req *GetSessionChallengeRequest) Pack() []byte {
	out := make([]byte, 17)
	types.PackUint8(uint8(req.AuthType), out, 0)
	types.PackBytes(req.Username[:], out, 1)
	return out
}

func (res *GetSessionChallengeResponse) Unpack(msg []byte) error {
	if len(msg) < 20 {
		return types.ErrUnpackedDataTooShortWith(len(msg), 20)
	}
	res.TemporarySessionID, _, _ = types.UnpackUint32L(msg, 0)
	b, _, _ := types.UnpackBytes(msg, 4, 16)
	res.Challenge = types.Array16(b)
	return nil
}

func (res *GetSessionChallengeResponse) Format() string {
	return fmt.Sprintf("%v", res)
}
