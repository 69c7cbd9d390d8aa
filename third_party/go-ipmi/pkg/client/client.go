package client

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/open"
	"github.com/bougou/go-ipmi/pkg/rmcpplus"
	"github.com/bougou/go-ipmi/pkg/types"

	"golang.org/x/net/proxy"
)

type Interface string

const (
	InterfaceLan     Interface = "lan"
	InterfaceLanplus Interface = "lanplus"
	InterfaceOpen    Interface = "open"
	InterfaceTool    Interface = "tool"

	// OpenBackend* are the supported values for Client.openBackendPref
	// (Windows only). They select which Microsoft_IPMI WMI transport the
	// Open Interface uses on Windows. Linux ignores the field.
	// They alias the backend names defined in pkg/open.
	OpenBackendAuto       string = open.BackendAuto
	OpenBackendCOM        string = open.BackendCOM
	OpenBackendPowerShell string = open.BackendPowerShell

	// OpenBackendPower is a deprecated alias of OpenBackendPowerShell.
	OpenBackendPower string = open.BackendPowerShell

	DefaultKeepAliveIntervalSec int = 30
	DefaultBufferSize           int = 4096

	// https://github.com/ipmitool/ipmitool/blob/IPMITOOL_1_8_19/src/plugins/lanplus/lanplus.h#L68
	// https://github.com/ipmitool/ipmitool/blob/IPMITOOL_1_8_19/src/plugins/lan/lan.c#L68
	// https://github.com/ipmitool/ipmitool/blob/IPMITOOL_1_8_19/src/plugins/open/open.c#L87
	DefaultLanTimeoutSec     int = 2
	DefaultLanRetries        int = 4
	DefaultLanplusTimeoutSec int = 1
	DefaultLanplusRetries    int = 4
	DefaultOpenTimeoutSec    int = 15
	DefaultOpenRetries       int = 0
)

type Client struct {
	Host      string
	Port      int
	Username  string
	Password  string
	Interface Interface

	debug bool

	maxPrivilegeLevel types.PrivilegeLevel

	responderAddr uint8
	responderLUN  uint8
	requesterAddr uint8
	requesterLUN  uint8

	openipmi *openipmi
	session  *session

	// this flags controls which IPMI version (1.5 or 2.0) be used by Client to send Request
	v20 bool

	udpClient  *UDPClient
	timeout    time.Duration
	bufferSize int

	// retryCount specifies the number of additional attempts to make after an initial failure.
	// For lan/lanplus interfaces, retries only occur when UDP exchanges timeout.
	// A value of 0 means no retries (only one attempt), 1 means one retry (two attempts total), etc.
	retryCount int

	l sync.Mutex

	// fruMaxReadSize is the largest Read FRU Data count that succeeded (or was
	// negotiated down after C7/C8/CAh). Zero means uninitialized; tryReadFRUData
	// starts from defaultFRUReadSize and remembers reductions across chunks.
	fruMaxReadSize uint8

	// activeSOLStream is protected by l.
	activeSOLStream *solStream

	// openBackendPref selects which Windows Open Interface transport to use
	// when Interface == InterfaceOpen. Valid values: "" / "auto" (default;
	// try native COM, fall back to PowerShell), "wmi-com", "wmi-ps".
	// Ignored on non-Windows platforms.
	openBackendPref string

	// closedCh is closed when Client.Close() is called.
	// used to notify other goroutines that Client is closed.
	closedCh chan bool
}

func NewOpenClient() (*Client, error) {
	myAddr := types.BMC_SA

	return &Client{
		Interface:  InterfaceOpen,
		bufferSize: DefaultBufferSize,
		timeout:    time.Second * time.Duration(DefaultOpenTimeoutSec),

		openipmi: &openipmi{
			myAddr:     myAddr,
			targetAddr: myAddr,
		},
	}, nil
}

// NewToolClient creates an IPMI client based ipmitool.
// You should pass the file path of ipmitool binary or path of a wrapper script
// that would be executed.
func NewToolClient(path string) (*Client, error) {
	return &Client{
		Host:      path,
		Interface: InterfaceTool,
	}, nil
}

func NewClient(host string, port int, user string, pass string) (*Client, error) {
	if len(user) > rmcpplus.MaxUserNameLength {
		return nil, fmt.Errorf("user name (%s) too long, exceed (%d) characters", user, rmcpplus.MaxUserNameLength)
	}

	c := &Client{
		Host:      host,
		Port:      port,
		Username:  user,
		Password:  pass,
		Interface: InterfaceLanplus,

		v20: true,

		bufferSize: DefaultBufferSize,
		timeout:    time.Second * time.Duration(DefaultLanplusTimeoutSec),
		retryCount: DefaultLanplusRetries,

		maxPrivilegeLevel: types.PrivilegeLevelUnspecified,

		responderAddr: types.BMC_SA,
		responderLUN:  uint8(types.IPMB_LUN_BMC),
		requesterAddr: types.RemoteConsole_SWID,
		requesterLUN:  0x00,

		session: &session{
			// IPMI Request Sequence, start from 1
			ipmiSeq: 1,
			v20: v20{
				state:         types.SessionStatePreSession,
				cipherSuiteID: types.CipherSuiteIDReserved,
			},
			v15: v15{
				active: false,
			},
		},

		closedCh: make(chan bool),
	}

	c.udpClient = &UDPClient{
		Host:       host,
		Port:       port,
		timeout:    c.timeout,
		bufferSize: c.bufferSize,
	}

	return c, nil
}

func (c *Client) WithInterface(intf Interface) *Client {
	c.Interface = intf
	return c
}

// WithOpenBackend selects the Windows Open Interface transport. Accepted
// values: "" / OpenBackendAuto (default; native COM with PowerShell fallback),
// OpenBackendCOM, OpenBackendPowerShell. No-op on non-Windows platforms.
// Must be called before Connect.
func (c *Client) WithOpenBackend(pref string) *Client {
	c.openBackendPref = pref
	return c
}

func (c *Client) WithDebug(debug bool) *Client {
	c.debug = debug
	return c
}

func (c *Client) WithUDPProxy(proxy proxy.Dialer) *Client {
	if c.udpClient != nil {
		c.udpClient.SetProxy(proxy)
	}
	return c
}

func (c *Client) WithTimeout(timeout time.Duration) *Client {
	c.timeout = timeout

	if c.udpClient != nil {
		c.udpClient.timeout = timeout
	}
	return c
}

func (c *Client) WithRetry(retryCount int) *Client {
	c.retryCount = retryCount
	return c
}

func (c *Client) WithBufferSize(bufferSize int) *Client {
	c.bufferSize = bufferSize
	if c.udpClient != nil {
		c.udpClient.bufferSize = bufferSize
	}
	return c
}

// WithCipherSuiteID sets one or more custom cipher suite which is used during OpenSession command.
// It is only valid for client with IPMI lanplus interface.
// For the custom cipherSuiteID to take effect, you must call WithCipherSuiteID before calling Connect method.
func (c *Client) WithCipherSuiteID(cipherSuiteID ...types.CipherSuiteID) *Client {
	if c.session != nil {
		if len(cipherSuiteID) > 1 {
			c.session.v20.customSuiteIDs = cipherSuiteID
		} else {
			c.session.v20.cipherSuiteID = cipherSuiteID[0]
		}
	}
	return c
}

// WithMaxPrivilegeLevel sets a specified session privilege level to use.
func (c *Client) WithMaxPrivilegeLevel(privilegeLevel types.PrivilegeLevel) *Client {
	c.maxPrivilegeLevel = privilegeLevel
	return c
}

func (c *Client) WithResponderAddr(responderAddr, responderLUN uint8) {
	c.responderAddr = responderAddr
	c.responderLUN = responderLUN
}
func (c *Client) WithRequesterAddr(requesterAddr, requesterLUN uint8) {
	c.requesterAddr = requesterAddr
	c.requesterLUN = requesterLUN
}

func (c *Client) SessionPrivilegeLevel() types.PrivilegeLevel {
	return c.maxPrivilegeLevel
}

// Connect connects to the bmc by specified Interface.
func (c *Client) Connect(ctx context.Context) error {
	// Optional RMCP Ping/Pong mechanism
	// pongRes, err := c.RmcpPing()
	// if err != nil {
	// return fmt.Errorf("RMCP Ping failed, err: %w", err)
	// }
	// if pongRes.IPMISupported {
	// return fmt.Errorf("ipmi not supported")
	// }

	switch c.Interface {
	case "", InterfaceOpen:
		var devnum int32 = 0
		return c.ConnectOpen(ctx, devnum)

	case InterfaceTool:
		var devnum int32 = 0
		return c.ConnectTool(ctx, devnum)

	case InterfaceLanplus:
		c.v20 = true
		return c.Connect20(ctx)

	case InterfaceLan:
		c.v20 = false
		return c.Connect15(ctx)

	default:
		return fmt.Errorf("not supported interface, supported: lan,lanplus,open")
	}
}

func (c *Client) Close(ctx context.Context) error {
	switch c.Interface {
	case "", InterfaceOpen:
		return c.closeOpen(ctx)

	case InterfaceTool:
		return c.closeTool(ctx)

	case InterfaceLan, InterfaceLanplus:
		return c.closeLAN(ctx)
	}

	return nil
}

func (c *Client) Exchange(ctx context.Context, request types.Request, response types.Response) error {
	if _, ok := request.(*types.SOLPayloadRequest); ok && c.Interface != InterfaceLanplus {
		return fmt.Errorf("SOL payload exchange requires lanplus interface")
	}

	switch c.Interface {
	case "", InterfaceOpen:
		return c.exchangeOpen(ctx, request, response)

	case InterfaceTool:
		return c.exchangeTool(ctx, request, response)

	case InterfaceLan, InterfaceLanplus:
		return c.exchangeLAN(ctx, request, response)

	}

	return nil
}

func (c *Client) lock() {
	c.l.Lock()
}

func (c *Client) unlock() {
	c.l.Unlock()
}
