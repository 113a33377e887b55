/// One figure set against its target, for the tables and the final summary.
struct Verdict: Sendable {
    /// The benchmark it comes from (`render`, `pipeline`, `moments`).
    let section: String
    /// What was measured.
    let measure: String
    /// The figure, formatted.
    let figure: String
    /// The target, in words.
    let target: String
    /// Whether the figure meets the target; nil when it could not be measured.
    let passed: Bool?

    /// `PASS`, `MISS`, or `n/a`.
    var word: String {
        passed.map { $0 ? "PASS" : "MISS" } ?? "n/a"
    }

    /// Prints verdicts as a table.
    static func printTable(_ verdicts: [Verdict], withSection: Bool = false) {
        var rows: [[String]] = []
        for verdict in verdicts {
            let row = [verdict.measure, verdict.figure, verdict.target, verdict.word]
            rows.append(withSection ? [verdict.section] + row : row)
        }
        let header = ["measure", "figure", "target", "verdict"]
        Table.print(header: withSection ? ["bench"] + header : header, rows: rows)
    }
}
