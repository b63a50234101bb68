import Foundation
import Mesh

/// The mesh's storm bound (Docs/protocols/mesh.md 7.2): floods over 20 random geometric graphs of 50 nodes in
/// the simulated radio, transmissions per flood with plain flooding (the duplicate rule alone)
/// and with pruning. Goals: every flood within 2|E| and complete; pruned ≤ 0.6 × plain.
struct MeshBench: BenchSection {
    let name = "mesh"
    let title = "Mesh: flooding transmissions per packet, pruned vs plain (simulated radio)"

    static let ratioGoal = 0.6

    func run(_ context: BenchContext) throws -> SectionReport {
        var report = SectionReport(table: MarkdownTable(
            headers: ["mean degree", "graphs", "mean edges E", "plain (mean / max)", "pruned (mean / max)", "pruned / plain", "pruned / 2E"],
            rightAligned: [0, 1, 2, 3, 4, 5, 6]))
        for degree in [6.5, 9.1] {
            let r = FloodExperiment.run(graphs: 20, nodes: 50, meanDegree: degree, seed: 7)
            report.table.add([
                String(format: "%.1f", r.meanDegree), "\(r.graphs)", String(format: "%.0f", r.meanEdges),
                String(format: "%.0f / %d", r.plainMean, r.plainMax), String(format: "%.0f / %d", r.prunedMean, r.prunedMax),
                String(format: "%.2f", r.ratio), String(format: "%.2f", r.prunedPerTwoE),
            ])
            if r.worstBoundRatio > 1 { report.problems.append("a flood exceeded 2|E| at degree \(degree)") }
            if r.prunedComplete < r.graphs { report.problems.append("\(r.graphs - r.prunedComplete) pruned floods missed a node at degree \(degree)") }
            if r.ratio > Self.ratioGoal { report.problems.append("pruned/plain \(r.ratio) above the \(Self.ratioGoal) goal at degree \(degree)") }
        }
        report.notes.append("No loss, fresh neighbour lists (two announce rounds first), TTL 7; one transmission = one packet on one link.")
        return report
    }
}
