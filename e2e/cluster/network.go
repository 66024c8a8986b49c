package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The Pod network, as a cluster's is to what runs in it, but on this
// machine only (docs/cluster.md, "The Pod network"):
//
//   - the CNI bridge has the gateway address podGateway, so this machine
//     (the API server calling a webhook's Service, the kubelet's probes, the
//     API server's proxy) reaches Pod IPs; Pods get no default route and the
//     machine does not forward, so their traffic goes nowhere else;
//   - Pods reach the API server where in-cluster clients dial it, the
//     kubernetes Service's address (firstService:443), through one DNAT rule
//     to 127.0.0.1:apiserverPort: there is no kube-proxy. Loopback is an
//     allowed destination from the bridge only for that rule's connections
//     (route_localnet on the bridge, a filter dropping every other packet
//     from a Pod to 127.0.0.0/8 or to the machine).
const (
	podGateway = "10.213.77.1"
	// nftTable holds the suite's only netfilter rules; deleting it undoes
	// them all.
	nftTable = "job_signal_e2e"
)

// nftRules is the table: the DNAT of the kubernetes Service's address to
// the API server, and what a Pod may reach on this machine: replies to
// connections the machine opened (probes, webhook calls, the API server's
// proxy), and that one rule's connections.
func nftRules() string {
	return fmt.Sprintf(`table ip %[1]s {
	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		iifname %[2]q ip daddr %[3]s tcp dport 443 dnat to 127.0.0.1:%[4]d
	}
	chain input {
		type filter hook input priority filter; policy accept;
		iifname %[2]q ct state established,related accept
		iifname %[2]q ct status dnat ip daddr 127.0.0.1 tcp dport %[4]d accept
		iifname %[2]q drop
	}
}
`, nftTable, bridgeName, firstService, apiserverPort)
}

// setUpNetwork creates the bridge with its gateway address (the CNI
// bridge plugin takes it as it finds it), lets it carry the DNAT rule's
// loopback connections, and loads the rules. Start calls it before
// containerd; removeState undoes it.
func setUpNetwork() error {
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err != nil {
		if _, err := run(time.Minute, nil, "ip", "link", "add", bridgeName, "type", "bridge"); err != nil {
			return err
		}
	}
	if _, err := run(time.Minute, nil, "ip", "addr", "replace", podGateway+"/24", "dev", bridgeName); err != nil {
		return err
	}
	if _, err := run(time.Minute, nil, "ip", "link", "set", bridgeName, "up"); err != nil {
		return err
	}
	// Without it the kernel drops a packet bound for 127.0.0.1 that came in
	// on the bridge (after the DNAT), and the API server's reply from it.
	sysctl := filepath.Join("/proc/sys/net/ipv4/conf", bridgeName, "route_localnet")
	if err := os.WriteFile(sysctl, []byte("1"), 0o644); err != nil {
		return fmt.Errorf("letting %s carry the API server's address: %w", bridgeName, err)
	}
	deleteRules(func(string, ...any) {}) // an earlier run's, if any
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(nftRules())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft -f (the DNAT of %s:443 to the API server): %w: %s", firstService, err, out)
	}
	return nil
}

// deleteRules removes the suite's netfilter table.
func deleteRules(logf func(string, ...any)) {
	if exec.Command("nft", "list", "table", "ip", nftTable).Run() != nil {
		return // not there (or no nft: nothing was loaded)
	}
	if out, err := exec.Command("nft", "delete", "table", "ip", nftTable).CombinedOutput(); err != nil {
		logf("deleting nft table %s: %v %s", nftTable, err, strings.TrimSpace(string(out)))
	}
}
