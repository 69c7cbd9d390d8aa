package app

import (
	"github.com/bougou/go-ipmi/pkg/types"
	// 21.5 Get Configurable Commands Command
)

type GetConfigurableCommandsRequest struct {
	ChannelNumber uint8

	CommandRangeMask CommandRangeMask
	NetFn            types.NetFn
	LUN              uint8

	CodeForNetFn2C uint8
	OEMIANA        uint32 // 3 bytes only
}

type GetConfigurableCommandsResponse struct {
	// Todo
	CommandSupportMask []byte
}

func (req *GetConfigurableCommandsRequest) Command() types.Command {
	return types.CommandGetConfigurableCommands
}

func (req *GetConfigurableCommandsRequest) Pack() []byte {
	out := make([]byte, 6)
	types.PackUint8(req.ChannelNumber, out, 0)

	netfn := (uint8(req.NetFn) & 0x3f) | (uint8(req.CommandRangeMask) << 6)
	types.PackUint8(netfn, out, 1)

	types.PackUint8(req.LUN&0x03, out, 2)

	if uint8(req.NetFn) == 0x2c {
		types.PackUint8(req.CodeForNetFn2C, out, 3)
		return out[0:4]
	}

	if uint8(req.NetFn) == 0x2e {
		types.PackUint24L(req.OEMIANA, out, 3)
		return out[0:6]
	}

	return out[0:3]
}

func (res *GetConfigurableCommandsResponse) Unpack(msg []byte) error {
	if len(msg) < 16 {
		return types.ErrUnpackedDataTooShortWith(len(msg), 16)
	}

	res.CommandSupportMask, _, _ = types.UnpackBytes(msg, 0, 16)
	return nil
}

func (res *GetConfigurableCommandsResponse) Format() string {
	// Todo
	return ""
}
