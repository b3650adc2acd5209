import Foundation

/// The printed result of a run: where it ran, the table, and the targets.
struct Report {
    let results: [Scenario: [String: Summary]]
    let contestants: [Contestant]
    let options: RunOptions
    let seconds: Double
    let loadAtStart: String?

    static let ours = "DependencyInjection"
    static let direct = "Direct"

    var text: String {
        var lines: [String] = []
        lines.append("Date: \(Self.timestamp())")
        lines.append("Machine: \(Self.machineDescription())")
        if let load = loadAtStart { lines.append("Load average at start: \(load)") }
        lines.append(
            "Run: release build, \(options.repetitions) repetitions of about "
                + "\(options.repetitionNanoseconds / 1_000_000) ms per cell, contestants interleaved; "
                + String(format: "%.0f s in all.", seconds))
        lines.append("Cells: ns/op, median (min–max). Ratios compare medians.")
        lines.append("")
        lines.append(contentsOf: table)
        lines.append("")
        lines.append("Targets:")
        lines.append(contentsOf: targets)
        return lines.joined(separator: "\n")
    }

    // MARK: - Table

    private var table: [String] {
        let names = contestants.map(\.name)
        var lines = [
            "| Scenario | " + names.joined(separator: " | ") + " | fastest peer ÷ ours | ours ÷ direct |",
            "|---|" + String(repeating: "---:|", count: names.count + 2),
        ]
        for scenario in options.scenarios {
            guard let row = results[scenario] else { continue }
            let cells = names.map { name in row[name].map(Self.cell) ?? "–" }
            let peerRatio = fastestPeerRatio(scenario).map { Self.ratio($0) } ?? "–"
            let directRatio = directRatio(scenario).map { Self.ratio($0) } ?? "–"
            lines.append(
                "| \(scenario.title) | " + cells.joined(separator: " | ")
                    + " | \(peerRatio) | \(directRatio) |")
        }
        return lines
    }

    /// How many times faster ours is than the fastest DI package, by median.
    private func fastestPeerRatio(_ scenario: Scenario) -> Double? {
        guard let row = results[scenario], let ours = row[Self.ours]?.median else { return nil }
        let peers = contestants.filter(\.isPeer).compactMap { row[$0.name]?.median }
        guard let fastest = peers.min() else { return nil }
        return fastest / ours
    }

    /// How many times slower ours is than direct construction, by median.
    private func directRatio(_ scenario: Scenario) -> Double? {
        guard let row = results[scenario], let ours = row[Self.ours]?.median,
            let direct = row[Self.direct]?.median
        else { return nil }
        return ours / direct
    }

    // MARK: - Targets

    private var targets: [String] {
        var lines: [String] = []
        for scenario in options.scenarios {
            guard let ratio = fastestPeerRatio(scenario) else { continue }
            lines.append(
                Self.verdict(ratio >= 10)
                    + " \(scenario.rawValue): at least 10× faster than the fastest peer "
                    + "(\(Self.ratio(ratio)))")
        }
        for scenario in [Scenario.leaf, .chain] where options.scenarios.contains(scenario) {
            guard let ratio = directRatio(scenario) else { continue }
            lines.append(
                Self.verdict(ratio <= 3)
                    + " \(scenario.rawValue): within 3× of direct construction (\(Self.ratio(ratio)))")
        }
        if let concurrent = results[.concurrentSingleton]?[Self.ours]?.median,
            let single = results[.singleton]?[Self.ours]?.median
        {
            lines.append(
                Self.verdict(concurrent <= single)
                    + " E: aggregate ns/op on 2 threads no worse than B on one ("
                    + "\(Self.number(concurrent)) vs \(Self.number(single)) ns/op)")
        }
        return lines
    }

    // MARK: - Formatting

    static func verdict(_ met: Bool) -> String { met ? "[met]    " : "[NOT met]" }

    static func number(_ value: Double) -> String {
        value < 100 ? String(format: "%.1f", value) : String(format: "%.0f", value)
    }

    static func cell(_ summary: Summary) -> String {
        "\(number(summary.median)) (\(number(summary.min))–\(number(summary.max)))"
    }

    static func ratio(_ value: Double) -> String {
        value < 10 ? String(format: "%.2f×", value) : String(format: "%.0f×", value)
    }

    static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date())
    }

    /// CPU model, cores, memory and OS, from what the process can see.
    static func machineDescription() -> String {
        let info = ProcessInfo.processInfo
        var cpu = "unknown CPU"
        if let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) {
            func field(_ name: String) -> String? {
                cpuinfo.split(separator: "\n")
                    .first { $0.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) == name }
                    .flatMap { $0.split(separator: ":", maxSplits: 1).last }
                    .map { $0.trimmingCharacters(in: .whitespaces) }
            }
            cpu = field("model name") ?? cpu
            if let family = field("cpu family"), let model = field("model") {
                cpu += " (family \(family), model \(model))"
            }
            if field("flags")?.split(separator: " ").contains("hypervisor") == true {
                cpu += " in a virtual machine"
            }
        }
        let memory = Double(info.physicalMemory) / Double(1 << 30)
        return "\(cpu), \(info.activeProcessorCount) cores, "
            + String(format: "%.0f GiB", memory) + ", \(info.operatingSystemVersionString)"
    }

    /// The 1-, 5- and 15-minute load averages, where the system tells them: other work
    /// on the machine shows in the spread of each cell and most in scenario E.
    static func loadAverage() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
