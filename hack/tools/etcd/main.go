// Command etcd is upstream's etcd server, pinned to the version kube-apiserver
// is tested with (Debian's etcd-server is too old).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
