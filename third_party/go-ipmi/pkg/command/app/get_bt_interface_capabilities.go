package app

import (
	"github.com/bougou/go-ipmi/pkg/types"
	// 22.10 Get BT Interface Capabilities Command
)

type GetBTInterfaceCapabilitiesRequest struct {
	// empty
}

type GetBTInterfaceCapabilitiesResponse struct {
	OutstandingRequestsCountSupported uint8
	InputBufferMessageSizeBytes       uint8
	OutputBufferMessageSizeBytes      uint8
	BMCRequestToResponseTimeSec       uint8
	RecommendedRetries                uint8
}

func (req *GetBTInterfaceCapabilitiesRequest) Command() types.Command {
	return types.CommandGetBTInterfaceCapabilities
}

func (req *GetBTInterfaceCapabilitiesRequest) Pack() []byte {
	return []byte{}
}

func (res *GetBTInterfaceCapabilitiesResponse) Unpack(msg []byte) error {
	// at least 3 bytes
	if len(msg) < 5 {
		return types.ErrUnpackedDataTooShortWith(len(msg), 5)
	}

	res.OutstandingRequestsCountSupported, _, _ = types.UnpackUint8(msg, 0)
	res.InputBufferMessageSizeBytes, _, _ = types.UnpackUint8(msg, 1)
	res.OutputBufferMessageSizeBytes, _, _ = types.UnpackUint8(msg, 2)
	res.BMCRequestToResponseTimeSec, _, _ = types.UnpackUint8(msg, 3)
	res.RecommendedRetries, _, _ = types.UnpackUint8(msg, 4)
	return nil
}

func (res *GetBTInterfaceCapabilitiesResponse) Format() string {
	return ""
}
