/// One figure set against its target, for the tables and the final summary.
public struct Verdict: Sendable {
    /// The benchmark it comes from (`render`, `pipeline`, `moments`).
    public let section: String
    /// What was measured.
    public let measure: String
    /// The figure, formatted.
    public let figure: String
    /// The target, in words.
    public let target: String
    /// Whether the figure meets the target; nil when it could not be measured.
    public let passed: Bool?

    /// A verdict from its fields.
    public init(section: String, measure: String, figure: String, target: String, passed: Bool?) {
        self.section = section
        self.measure = measure
        self.figure = figure
        self.target = target
        self.passed = passed
    }

    /// `PASS`, `MISS`, or `n/a`.
    public var word: String {
        passed.map { $0 ? "PASS" : "MISS" } ?? "n/a"
    }

    /// Prints verdicts as a table.
    public static func printTable(_ verdicts: [Verdict], withSection: Bool = false) {
        var rows: [[String]] = []
        for verdict in verdicts {
            let row = [verdict.measure, verdict.figure, verdict.target, verdict.word]
            rows.append(withSection ? [verdict.section] + row : row)
        }
        let header = ["measure", "figure", "target", "verdict"]
        Table.print(header: withSection ? ["bench"] + header : header, rows: rows)
    }
}
