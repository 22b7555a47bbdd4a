// The threshold grammar's entry point: text in, the one threshold model (LoadResults' `Threshold`) out.
import ThresholdModel

extension Threshold {
    /// Parses one rule; throws `ThresholdSyntaxErrors` with every problem and its 1-based column.
    /// The result is what the verdict judges: no second model, no mapping between the two.
    public static func parse(_ text: String) throws(ThresholdSyntaxErrors) -> Threshold {
        var parser = ThresholdParser(text: text)
        return try parser.parse()
    }
}
