import Foundation

/// Minimal inline-SVG line and bar charts for the HTML report: no JavaScript, no network.
///
/// A chart is a fixed-size SVG with axes, grid lines with labels, one `<path>` per series and a legend;
/// a series of a single point is drawn as a dot (a path needs two points to show).
/// X and Y are plain numbers; `logX` maps the x axis through log10 (used for percentile spectra).
/// A point whose y is NaN is a gap: the line breaks there (a monitor's gap is never drawn as zero).
struct SVGChart {
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var series: [Series]
    var width = 720.0
    var height = 260.0
    var logX = false
    var xTickLabel: (Double) -> String = { SVGChart.number($0) }
    /// Spans of x shaded behind the series (outages), each with a label for its tooltip.
    var bands: [(start: Double, end: Double, label: String)] = []
    /// Instants of x marked by a dashed vertical line (control events), each with a short label
    /// drawn at its top and a tooltip.
    var markers: [(x: Double, label: String)] = []

    private let left = 64.0, right = 16.0, top = 44.0, bottom = 40.0

    func render() -> String {
        let all = series.flatMap(\.points).filter { $0.y.isFinite }
        guard !all.isEmpty else {
            return "<figure><figcaption>\(escape(title))</figcaption><p class=\"empty\">no data</p></figure>"
        }
        func tx(_ x: Double) -> Double { logX ? log10(max(x, 1e-9)) : x }
        let xs = all.map { tx($0.x) }
        // One distinct x (a run with a single interval): widen the axis around it so the point sits
        // in the middle instead of on the axis line.
        let spread = xs.max()! - xs.min()!
        let pad = spread > 1e-9 ? 0 : max(abs(xs.min()!) * 0.5, 0.5)
        let minX = xs.min()! - pad
        let maxX = xs.max()! + pad
        let maxY = niceCeiling(all.map(\.y).max() ?? 1)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        func px(_ x: Double) -> Double { left + (tx(x) - minX) / (maxX - minX) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - (y / maxY) * plotHeight }

        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\">"
        svg += "<text x=\"\(left)\" y=\"18\" class=\"title\">\(escape(title))</text>"
        for i in 0...4 {
            let y = maxY * Double(i) / 4
            svg += "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(f(py(y)))\" y2=\"\(f(py(y)))\" class=\"grid\"/>"
            svg += "<text x=\"\(left - 6)\" y=\"\(f(py(y) + 4))\" class=\"tick\" text-anchor=\"end\">\(SVGChart.number(y))</text>"
        }
        let ticks =
            logX
            ? [50.0, 90, 99, 99.9, 99.99, 99.999].map { 100 / (100 - $0) }.filter { tx($0) <= maxX + 1e-9 }
            : (0...5).map { minX + (maxX - minX) * Double($0) / 5 }
        for tick in ticks {
            svg +=
                "<text x=\"\(f(px(tick)))\" y=\"\(f(height - bottom + 16))\" class=\"tick\" text-anchor=\"middle\">\(escape(xTickLabel(tick)))</text>"
        }
        svg += "<line x1=\"\(left)\" x2=\"\(left)\" y1=\"\(top)\" y2=\"\(top + plotHeight)\" class=\"axis\"/>"
        svg += "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(top + plotHeight)\" y2=\"\(top + plotHeight)\" class=\"axis\"/>"
        svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 6))\" class=\"label\" text-anchor=\"middle\">\(escape(xLabel))</text>"
        svg +=
            "<text x=\"14\" y=\"\(f(top + plotHeight / 2))\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 14 \(f(top + plotHeight / 2)))\">\(escape(yLabel))</text>"
        for band in bands where !logX {
            let x0 = min(max(px(band.start), left), width - right)
            let x1 = min(max(px(band.end), left), width - right)
            guard x1 > x0 else { continue }
            svg +=
                "<rect x=\"\(f(x0))\" y=\"\(top)\" width=\"\(f(x1 - x0))\" height=\"\(plotHeight)\" class=\"band\"><title>\(escape(band.label))</title></rect>"
        }
        for (index, marker) in markers.enumerated() where !logX {
            let x = px(marker.x)
            guard x >= left - 0.5, x <= width - right + 0.5 else { continue }
            // Near the right edge the label goes to the line's left, so it is not cut off; labels take
            // three rows in turn, so close markers do not print over each other.
            let leftward = x > width - right - 110
            svg +=
                "<g class=\"marker\"><title>\(escape(marker.label))</title><line x1=\"\(f(x))\" x2=\"\(f(x))\" y1=\"\(top)\" y2=\"\(top + plotHeight)\" stroke=\"#7c3aed\" stroke-dasharray=\"4 3\"/>"
                + "<text x=\"\(f(leftward ? x - 3 : x + 3))\" y=\"\(f(top + 10 + Double(index % 3) * 12))\" class=\"tick\"\(leftward ? " text-anchor=\"end\"" : "")>\(escape(String(marker.label.prefix(26))))</text></g>"
        }
        var legendX = left
        for entry in series where entry.points.contains(where: { $0.y.isFinite }) {
            // A gap (NaN) ends a run of the line; the next point starts a new one.
            var d: [String] = []
            var runs: [[(x: Double, y: Double)]] = [[]]
            for point in entry.points {
                if point.y.isFinite {
                    d.append("\(runs[runs.count - 1].isEmpty ? "M" : "L")\(f(px(point.x))),\(f(py(point.y)))")
                    runs[runs.count - 1].append(point)
                } else if !runs[runs.count - 1].isEmpty {
                    runs.append([])
                }
            }
            svg += "<path d=\"\(d.joined(separator: " "))\" stroke=\"\(entry.color)\" class=\"series\"/>"
            // A line needs two points: a run of one gets a visible marker.
            for run in runs where run.count == 1 {
                let point = run[0]
                svg += "<circle cx=\"\(f(px(point.x)))\" cy=\"\(f(py(point.y)))\" r=\"4\" fill=\"\(entry.color)\" class=\"point\"/>"
            }
            svg +=
                "<rect x=\"\(f(legendX))\" y=\"24\" width=\"10\" height=\"10\" fill=\"\(entry.color)\"/><text x=\"\(f(legendX + 14))\" y=\"33\" class=\"legend\">\(escape(entry.name))</text>"
            legendX += 14 + Double(entry.name.count) * 7 + 16
        }
        return svg + "</svg>"
    }

    /// Horizontal stacked bar: one segment per (name, value).
    static func stackedBar(title: String, segments: [(name: String, value: Double)], colors: [String], width: Double = 720) -> String {
        let total = max(segments.reduce(0) { $0 + $1.value }, 1e-9)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) 92\" width=\"\(Int(width))\" height=\"92\" role=\"img\">"
        svg += "<text x=\"8\" y=\"18\" class=\"title\">\(escape(title))</text>"
        var x = 8.0
        let barWidth = width - 16
        for (index, segment) in segments.enumerated() {
            let w = segment.value / total * barWidth
            let color = colors[index % colors.count]
            svg +=
                "<path d=\"M\(f(x)),28 h\(f(max(w, 0.5))) v26 h\(f(-max(w, 0.5))) Z\" fill=\"\(color)\"><title>\(escape(segment.name)): \(number(segment.value)) ms</title></path>"
            svg += "<rect x=\"\(f(8 + Double(index) * 118))\" y=\"66\" width=\"10\" height=\"10\" fill=\"\(color)\"/>"
            svg += "<text x=\"\(f(22 + Double(index) * 118))\" y=\"75\" class=\"legend\">\(escape(segment.name)) \(number(segment.value))</text>"
            x += w
        }
        return svg + "</svg>"
    }

    static func number(_ value: Double) -> String {
        if value == 0 { return "0" }
        if abs(value) >= 1_000_000 { return String(format: "%.1fM", value / 1_000_000) }
        if abs(value) >= 10_000 { return String(format: "%.0fk", value / 1000) }
        if abs(value) >= 100 { return String(format: "%.0f", value) }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    private func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let magnitude = pow(10, floor(log10(value)))
        for step in [1.0, 2, 2.5, 5, 10] where step * magnitude >= value { return step * magnitude }
        return 10 * magnitude
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }
    private func f(_ value: Double) -> String { Self.f(value) }
    private func escape(_ text: String) -> String { SVGChart.escape(text) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
