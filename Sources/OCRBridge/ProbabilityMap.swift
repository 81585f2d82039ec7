/// A network's probability map, one value a cell, row by row.
enum ProbabilityMap {
    /// The 8-connected regions of the cells above `threshold`, each the indices of its cells in
    /// the order a depth-first fill reaches them, the regions in the order of their first cell.
    static func regions(of map: [Float], width: Int, height: Int, above threshold: Float) -> [[Int]] {
        var seen = [Bool](repeating: false, count: map.count)
        var regions: [[Int]] = []
        for start in map.indices where map[start] > threshold && !seen[start] {
            seen[start] = true
            var stack = [start]
            var cells: [Int] = []
            while let at = stack.popLast() {
                cells.append(at)
                let x = at % width
                let y = at / width
                for ny in max(0, y - 1)...min(height - 1, y + 1) {
                    for nx in max(0, x - 1)...min(width - 1, x + 1) {
                        let neighbour = ny * width + nx
                        if !seen[neighbour] && map[neighbour] > threshold {
                            seen[neighbour] = true
                            stack.append(neighbour)
                        }
                    }
                }
            }
            regions.append(cells)
        }
        return regions
    }
}
