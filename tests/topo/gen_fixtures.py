#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""Generate the hwloc 2 XML topologies of tests/topo (committed with this script).

    python3 tests/topo/gen_fixtures.py tests/topo

Each fixture is a node shape coll/gpu must classify: sockets with NUMA nodes, PCIe host
bridges and switches, NVIDIA GPUs with their cuda/nvml OS devices, NICs with their
OpenFabrics or network OS devices, NVSwitches, and the "NVLinkBandwidth" matrix (MB/s per
direction, as hwloc's NVML backend writes it: GPUs as nvml OS devices, NVSwitches as PCI
devices).
"""
import os
import sys


class Topo:
    def __init__(self, name, packages, cores_per_package=4):
        self.name, self.gp, self.lines = name, 1, []
        self.packages, self.cores = packages, cores_per_package
        self.nvml = []        # gp index of every GPU's nvml OS device
        self.switches = []    # gp index of every NVSwitch PCI device
        self.bus = 0x10

    def next_gp(self):
        self.gp += 1
        return self.gp

    @staticmethod
    def mask(bits):
        return "0x%08x" % sum(1 << b for b in bits)

    def pci(self, busid, cls, vendor, device, children=(), subtype=None, link=16.0):
        gp = self.next_gp()
        st = ' subtype="%s"' % subtype if subtype else ""
        head = ('<object type="PCIDev" gp_index="%d"%s pci_busid="%s" pci_type="%04x [%04x:%04x] '
                '[%04x:0000] a1" pci_link_speed="%f"' % (gp, st, busid, cls, vendor, device, vendor, link))
        if not children:
            return [head + "/>"], gp
        body = [head + ">"]
        for c in children:
            body += ["  " + l for l in c]
        return body + ["</object>"], gp

    def osdev(self, name, ostype, subtype=None, infos=()):
        gp = self.next_gp()
        st = ' subtype="%s"' % subtype if subtype else ""
        lines = ['<object type="OSDev" gp_index="%d" name="%s"%s osdev_type="%d">' % (gp, name, st, ostype)]
        lines += ['  <info name="%s" value="%s"/>' % kv for kv in infos]
        return lines + ["</object>"], gp

    def gpu(self, index, busid, device, model, cls=0x0302):
        cuda, _ = self.osdev("cuda%d" % index, 5, "CUDA", [("Backend", "CUDA"), ("GPUModel", model)])
        nvml, nvml_gp = self.osdev("nvml%d" % index, 1, "NVML", [("Backend", "NVML"), ("GPUModel", model)])
        self.nvml.append(nvml_gp)
        return self.pci(busid, cls, 0x10de, device, [cuda, nvml])[0]

    def nic(self, busid, name, rdma=True, netdev=None):
        kids = []
        if rdma:
            kids.append(self.osdev(name, 3, "OpenFabrics", [("NodeGUID", "0000:0000:0000:0001")])[0])
        if netdev:
            kids.append(self.osdev(netdev, 2, None, [("Address", "02:00:00:00:00:01")])[0])
        cls = 0x0207 if rdma else 0x0200
        return self.pci(busid, cls, 0x15b3 if rdma else 0x8086, 0x1021 if rdma else 0x1563, kids)[0]

    def nvswitch(self, busid):
        lines, gp = self.pci(busid, 0x0680, 0x10de, 0x22a3, subtype="NVSwitch")
        self.switches.append(gp)
        return lines

    def bridge(self, children, host=False, busid=None):
        """A host bridge (host=True) or a PCI-to-PCI bridge over children."""
        gp = self.next_gp()
        lo, hi = self.bus, self.bus + 1
        self.bus += 2
        if host:
            head = '<object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" bridge_pci="0000:[%02x-%02x]">' % (gp, lo, hi)
        else:
            head = ('<object type="Bridge" gp_index="%d" bridge_type="1-1" depth="1" pci_busid="%s" '
                    'pci_type="0604 [1000:c030] [0000:0000] 00" pci_link_speed="31.5" bridge_pci="0000:[%02x-%02x]">'
                    % (gp, busid, lo, hi))
        body = [head]
        for c in children:
            body += ["  " + l for l in c]
        return body + ["</object>"]

    def render(self, io_per_package, nvlink=None):
        """io_per_package[p]: list of I/O trees under package p. nvlink: (objs, values)."""
        ncpu = self.packages * self.cores
        allcpu, allnode = self.mask(range(ncpu)), self.mask(range(self.packages))
        out = ['<?xml version="1.0" encoding="UTF-8"?>', '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
               '<topology version="2.0">',
               '  <object type="Machine" os_index="0" cpuset="%s" complete_cpuset="%s" allowed_cpuset="%s" '
               'nodeset="%s" complete_nodeset="%s" allowed_nodeset="%s" gp_index="1">'
               % (allcpu, allcpu, allcpu, allnode, allnode, allnode),
               '    <info name="Backend" value="Linux"/>',
               '    <info name="HostName" value="%s"/>' % self.name]
        for p in range(self.packages):
            cpus = self.mask(range(p * self.cores, (p + 1) * self.cores))
            node = self.mask([p])
            out.append('    <object type="Package" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" '
                       'complete_nodeset="%s" gp_index="%d">' % (p, cpus, cpus, node, node, self.next_gp()))
            out.append('      <object type="NUMANode" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" '
                       'complete_nodeset="%s" gp_index="%d" local_memory="68719476736"/>'
                       % (p, cpus, cpus, node, node, self.next_gp()))
            for c in range(p * self.cores, (p + 1) * self.cores):
                cpu = self.mask([c])
                out.append('      <object type="Core" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" '
                           'complete_nodeset="%s" gp_index="%d">' % (c, cpu, cpu, node, node, self.next_gp()))
                out.append('        <object type="PU" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" '
                           'complete_nodeset="%s" gp_index="%d"/>' % (c, cpu, cpu, node, node, self.next_gp()))
                out.append("      </object>")
            for tree in io_per_package[p]:
                out += ["      " + l for l in tree]
            out.append("    </object>")
        out.append("  </object>")
        if nvlink:
            objs, values = nvlink
            idx = "".join("%s:%d " % o for o in objs)
            vals = "".join("%d " % v for v in values)
            out.append('  <distances2hetero nbobjs="%d" kind="25" name="NVLinkBandwidth">' % len(objs))
            out.append('    <indexes length="%d">%s</indexes>' % (len(idx), idx))
            out.append('    <u64values length="%d">%s</u64values>' % (len(vals), vals))
            out.append("  </distances2hetero>")
        out.append("</topology>")
        return "\n".join(out) + "\n"

    def nvlink_matrix(self, gpu_gpu=None, gpu_switch=None):
        """MB/s matrices: gpu_gpu[(a, b)], gpu_switch[g] = [MB/s to each switch]."""
        objs = [("OSDev", g) for g in self.nvml] + [("PCIDev", s) for s in self.switches]
        n, ng = len(objs), len(self.nvml)
        m = [[0] * n for _ in range(n)]
        for i in range(n):
            m[i][i] = 1000000
        for (a, b), v in (gpu_gpu or {}).items():
            m[a][b] = m[b][a] = v
        for g, bws in (gpu_switch or {}).items():
            for s, v in enumerate(bws):
                m[g][ng + s] = m[ng + s][g] = v
        return objs, [v for row in m for v in row]


def dgx_h100():
    """8 H100 SXM on 4 NVSwitches; 8 RDMA NICs; 4 PCIe switches (2 GPUs + 2 NICs), 2 sockets."""
    t = Topo("dgx-h100", 2)
    io = [[], []]
    for sw in range(4):
        kids = []
        for k in range(2):
            g = 2 * sw + k
            kids.append(t.bridge([t.gpu(g, "0000:%02x:00.0" % (0x18 + 0x20 * sw + k), 0x2330,
                                        "NVIDIA H100 80GB HBM3")], busid="0000:%02x:%02x.0" % (0x17 + 0x20 * sw, k)))
        for k in range(2):
            n = 2 * sw + k
            kids.append(t.bridge([t.nic("0000:%02x:00.0" % (0x1a + 0x20 * sw + k), "mlx5_%d" % n, netdev="ibp%ds0" % n)],
                                 busid="0000:%02x:%02x.0" % (0x17 + 0x20 * sw, 2 + k)))
        up = t.bridge(kids, busid="0000:%02x:00.0" % (0x16 + 0x20 * sw))
        io[sw // 2].append(t.bridge([up], host=True))
    io[0].append(t.bridge([t.nvswitch("0000:%02x:00.0" % (0xe0 + s)) for s in range(4)], host=True))
    links = {g: [125000, 100000, 100000, 125000] for g in range(8)}  # 5+4+4+5 links x 25 GB/s
    return t.render(io, t.nvlink_matrix(gpu_switch=links))


def hgx_a100():
    """8 A100 SXM on 6 NVSwitches; per socket a top PCIe switch with two switches below, each
    with 2 GPUs and 2 NICs (nested switches: PXB between the halves of a socket)."""
    t = Topo("hgx-a100", 2)
    io = [[], []]
    for sock in range(2):
        subs = []
        for half in range(2):
            sw = 2 * sock + half
            kids = [t.bridge([t.gpu(2 * sw + k, "0000:%02x:00.0" % (0x40 + 0x10 * sw + k), 0x20b2,
                                    "NVIDIA A100-SXM4-80GB")], busid="0000:%02x:%02x.0" % (0x3f + 0x10 * sw, k))
                    for k in range(2)]
            kids += [t.bridge([t.nic("0000:%02x:00.0" % (0x42 + 0x10 * sw + k), "mlx5_%d" % (2 * sw + k))],
                              busid="0000:%02x:%02x.0" % (0x3f + 0x10 * sw, 2 + k)) for k in range(2)]
            subs.append(t.bridge(kids, busid="0000:%02x:%02x.0" % (0x3e, 0x10 * sock + half)))
        io[sock].append(t.bridge([t.bridge(subs, busid="0000:%02x:00.0" % (0x3d + sock))], host=True))
    io[1].append(t.bridge([t.nvswitch("0000:%02x:00.0" % (0xc0 + s)) for s in range(6)], host=True))
    links = {g: [50000] * 6 for g in range(8)}  # 2 links to each of 6 switches
    return t.render(io, t.nvlink_matrix(gpu_switch=links))


def workstation_4gpu_pairs():
    """4 RTX A6000 on root ports of one host bridge, NVLink bridges between 0-1 and 2-3,
    one Ethernet NIC without RDMA."""
    t = Topo("workstation-4gpu", 1, 8)
    ports = [t.bridge([t.gpu(g, "0000:%02x:00.0" % (0x21 + g), 0x2230, "NVIDIA RTX A6000", cls=0x0300)],
                      busid="0000:00:%02x.0" % (1 + g)) for g in range(4)]
    ports.append(t.bridge([t.nic("0000:05:00.0", "eno1", rdma=False, netdev="eno1")], busid="0000:00:1c.0"))
    return t.render([[t.bridge(ports, host=True)]], t.nvlink_matrix(gpu_gpu={(0, 1): 56250, (2, 3): 56250}))


def pcie_2gpu_2socket():
    """2 T4 on different sockets (no P2P between them), one RDMA NIC on the first socket."""
    t = Topo("pcie-2gpu", 2)
    io = [[t.bridge([t.bridge([t.gpu(0, "0000:3b:00.0", 0x1eb8, "Tesla T4")], busid="0000:3a:00.0"),
                     t.bridge([t.nic("0000:3c:00.0", "mlx5_0", netdev="ib0")], busid="0000:3a:01.0")], host=True)],
          [t.bridge([t.bridge([t.gpu(1, "0000:af:00.0", 0x1eb8, "Tesla T4")], busid="0000:ae:00.0")], host=True)]]
    return t.render(io)


def ethernet_near_2gpu():
    """2 GPUs on different sockets: an Ethernet port (no RDMA) beside the first, the RDMA
    NIC beside the second: both GPUs take the RDMA NIC."""
    t = Topo("ethernet-near", 2)
    io = [[t.bridge([t.bridge([t.gpu(0, "0000:3b:00.0", 0x2330, "NVIDIA H100")], busid="0000:3a:00.0"),
                     t.bridge([t.nic("0000:3c:00.0", "eno1", rdma=False, netdev="eno1")],
                              busid="0000:3a:01.0")], host=True)],
          [t.bridge([t.bridge([t.gpu(1, "0000:af:00.0", 0x2330, "NVIDIA H100")], busid="0000:ae:00.0"),
                     t.bridge([t.nic("0000:b0:00.0", "mlx5_0", netdev="ibp176s0")],
                              busid="0000:ae:01.0")], host=True)]]
    return t.render(io)


def fewer_nics_4gpu():
    """4 L40S behind one PCIe switch (P2P), one RDMA NIC for all of them."""
    t = Topo("fewer-nics", 1, 8)
    gpus = [t.bridge([t.gpu(g, "0000:%02x:00.0" % (0x82 + g), 0x26b9, "NVIDIA L40S")],
                     busid="0000:81:%02x.0" % g) for g in range(4)]
    switch = t.bridge(gpus, busid="0000:80:00.0")
    nic = t.bridge([t.nic("0000:c1:00.0", "mlx5_0", netdev="ibs1")], busid="0000:c0:00.0")
    return t.render([[t.bridge([switch, nic], host=True)]])


def gpuless():
    """A CPU node: one RDMA NIC, no GPU."""
    t = Topo("gpuless", 2)
    return t.render([[t.bridge([t.bridge([t.nic("0000:17:00.0", "mlx5_0", netdev="ib0")],
                                         busid="0000:16:00.0")], host=True)], []])


FIXTURES = {
    "dgx-h100.xml": dgx_h100,
    "hgx-a100.xml": hgx_a100,
    "workstation-4gpu-nvlink-pairs.xml": workstation_4gpu_pairs,
    "pcie-2gpu-2socket.xml": pcie_2gpu_2socket,
    "fewer-nics-4gpu.xml": fewer_nics_4gpu,
    "ethernet-near-2gpu.xml": ethernet_near_2gpu,
    "gpuless.xml": gpuless,
}

if __name__ == "__main__":
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, make in FIXTURES.items():
        with open(os.path.join(outdir, name), "w") as f:
            f.write(make())
    # a broken file: cut in the middle of an element
    text = gpuless()
    with open(os.path.join(outdir, "bad-truncated.xml"), "w") as f:
        f.write(text[: len(text) // 2])
