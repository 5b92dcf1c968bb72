// Seeded random edits of collections nested in a MixedValue property, made through live views
// (fresh ones and ones held across edits), sometimes by another thread's instance, compared
// after every edit with a plain Swift model of nested arrays and dictionaries.

import Foundation
import Testing
@testable import Strata
import StrataStore

/// A plain model of a mixed value made of integers, arrays and dictionaries.
private indirect enum Shape: Equatable {
    case int(Int)
    case list([Shape])
    case dictionary([String: Shape])

    var mixed: MixedValue {
        switch self {
        case .int(let value): .int(value)
        case .list(let elements): .fromArray(elements.map(\.mixed))
        case .dictionary(let entries): .fromDictionary(entries.mapValues(\.mixed))
        }
    }

    /// The shape at `path`, or nil when the path leads nowhere.
    func at(_ path: ArraySlice<MixedNesting.Step>) -> Shape? {
        guard let step = path.first else { return self }
        switch (self, step) {
        case (.list(let elements), .index(let index)) where elements.indices.contains(index): return elements[index].at(path.dropFirst())
        case (.dictionary(let entries), .key(let key)): return entries[key]?.at(path.dropFirst())
        default: return nil
        }
    }

    /// Changes the collection at `path` (which must be there) with `change`.
    mutating func change(at path: ArraySlice<MixedNesting.Step>, _ change: (inout Shape) -> Void) {
        guard let step = path.first else { change(&self); return }
        switch (self, step) {
        case (.list(var elements), .index(let index)):
            elements[index].change(at: path.dropFirst(), change)
            self = .list(elements)
        case (.dictionary(var entries), .key(let key)):
            entries[key]?.change(at: path.dropFirst(), change)
            self = .dictionary(entries)
        default:
            Issue.record("the model has no collection at the path")
        }
    }

    /// Every path to a collection, this one's first.
    func collectionPaths(_ prefix: [MixedNesting.Step] = []) -> [[MixedNesting.Step]] {
        switch self {
        case .int: []
        case .list(let elements): [prefix] + elements.enumerated().flatMap { $1.collectionPaths(prefix + [.index($0)]) }
        case .dictionary(let entries): [prefix] + entries.sorted { $0.key < $1.key }.flatMap { $1.collectionPaths(prefix + [.key($0)]) }
        }
    }
}

@Suite struct MixedNestedRandomizedTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Setting.self, Appliance.self]) }

    /// A small random shape: an integer, or (while `depth` allows) an empty or one-element
    /// collection.
    private static func randomShape(_ random: inout SeededGenerator, depth: Int) -> Shape {
        switch depth > 0 ? Int.random(in: 0..<4, using: &random) : 0 {
        case 1: return .list([])
        case 2: return .dictionary(["k": .int(Int.random(in: 0..<10, using: &random))])
        case 3: return .list([Self.randomShape(&random, depth: depth - 1)])
        default: return .int(Int.random(in: 0..<100, using: &random))
        }
    }

    /// Whether `value` is a list and `shape` one, or both dictionaries.
    private static func sameKind(_ value: MixedValue, _ shape: Shape?) -> Bool {
        switch (value, shape) {
        case (.list, .list?), (.dictionary, .dictionary?): true
        default: false
        }
    }

    /// The view at `path` read afresh from `value`.
    private static func view(_ value: MixedValue, at path: [MixedNesting.Step]) -> MixedValue? {
        var current = value
        for step in path {
            switch step {
            case .index(let index):
                guard let list = current.listValue, index < list.count else { return nil }
                current = list[index]
            case .key(let key):
                guard let next = current.dictionaryValue?[key] else { return nil }
                current = next
            }
        }
        return current
    }

    /// One random edit of the collection `target` (a view) whose model is `shape`. Returns
    /// where the edit moved the positions (or keys) of the collection's elements, nil for
    /// removed ones (views of collections inside them follow the same way), or nil when it
    /// moved none.
    @discardableResult
    private static func edit(_ target: MixedValue, _ shape: inout Shape, _ random: inout SeededGenerator,
                             depth: Int) -> ((MixedNesting.Step) -> MixedNesting.Step?)? {
        var moved: ((MixedNesting.Step) -> MixedNesting.Step?)?
        let new = Self.randomShape(&random, depth: depth)
        if let list = target.listValue, case .list(var elements) = shape {
            let choice = Int.random(in: 0..<(elements.isEmpty ? 2 : 6), using: &random)
            switch choice {
            case 0:
                list.append(new.mixed)
                elements.append(new)
            case 1:
                let position = Int.random(in: 0...elements.count, using: &random)
                list.insert(new.mixed, at: position)
                elements.insert(new, at: position)
                moved = { step in if case .index(let i) = step, i >= position { .index(i + 1) } else { step } }
            case 2:
                let position = Int.random(in: 0..<elements.count, using: &random)
                list.remove(at: position)
                elements.remove(at: position)
                moved = { step in
                    guard case .index(let i) = step else { return step }
                    return i == position ? nil : i > position ? .index(i - 1) : step
                }
            case 3:
                let position = Int.random(in: 0..<elements.count, using: &random)
                list[position] = new.mixed
                elements[position] = new
            case 4:
                let from = Int.random(in: 0..<elements.count, using: &random), to = Int.random(in: 0..<elements.count, using: &random)
                list.move(from: from, to: to)
                elements.insert(elements.remove(at: from), at: to)
                // The model's own reckoning: the element's new position, found by moving it.
                var positions = Array(elements.indices)
                positions.insert(positions.remove(at: from), at: to)
                let after = Dictionary(uniqueKeysWithValues: positions.enumerated().map { ($1, $0) })
                moved = { step in if case .index(let i) = step { after[i].map { .index($0) } } else { step } }
            default:
                let i = Int.random(in: 0..<elements.count, using: &random), j = Int.random(in: 0..<elements.count, using: &random)
                list.swapAt(i, j)
                elements.swapAt(i, j)
                moved = { step in if case .index(let k) = step { k == i ? .index(j) : k == j ? .index(i) : step } else { step } }
            }
            shape = .list(elements)
        } else if let map = target.dictionaryValue, case .dictionary(var entries) = shape {
            let key = ["a", "b", "c", "d"].randomElement(using: &random) ?? "a"
            if Int.random(in: 0..<3, using: &random) == 0 {
                map.removeObject(for: key)
                entries[key] = nil
                moved = { step in step == .key(key) ? nil : step }
            } else {
                map[key] = new.mixed
                entries[key] = new
            }
            shape = .dictionary(entries)
        } else {
            Issue.record("the view and the model differ in kind")
        }
        return moved
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomEditsThroughLiveViewsMatchAPlainModel(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let db = try Database(configuration: configuration)
        var model = Shape.list([.dictionary([:]), .list([])])
        let setting = try db.write { db.create(Setting.self, value: ["id": 1, "value": model.mixed]) }
        /// Views read once and kept across edits: where they are now (the positions of their
        /// elements followed through this instance's edits), or nil once their element was
        /// removed by one (detached).
        var held: [(path: [MixedNesting.Step]?, value: MixedValue)] = []
        for step in 0..<300 {
            let paths = model.collectionPaths()
            let path = paths[Int.random(in: 0..<paths.count, using: &random)]
            let depth = 3 - min(path.count, 3)
            if step % 25 == 24 {
                // Another thread's instance edits the same place; this one sees it after refresh.
                let before = model
                let seedForOther = random.next()
                let configuration = configuration
                let result = EditResult()
                let done = DispatchSemaphore(value: 0)
                Thread {
                    var otherRandom = SeededGenerator(seed: seedForOther)
                    var edited = before
                    if let other = try? Database(configuration: configuration),
                       let object = other.object(ofType: Setting.self, forPrimaryKey: 1),
                       let target = Self.view(object.value, at: path), var shape = before.at(path[...]) {
                        _ = try? other.write { Self.edit(target, &shape, &otherRandom, depth: depth) }
                        edited.change(at: path[...]) { $0 = shape }
                        result.shape = edited
                    }
                    done.signal()
                }.start()
                done.wait()
                model = try #require(result.shape)
                db.refresh()
            } else {
                // A held view when there is one for the path (half the time), else a fresh one.
                // (One of the same kind: a held list whose place now holds a dictionary is invalidated.)
                let reuse = Bool.random(using: &random) ? held.first { $0.path == path && Self.sameKind($0.value, model.at(path[...])) }?.value : nil
                let target = try #require(reuse ?? Self.view(setting.value, at: path))
                var shape = try #require(model.at(path[...]))
                let moved = try db.write { Self.edit(target, &shape, &random, depth: depth) }
                model.change(at: path[...]) { $0 = shape }
                if let moved {
                    for index in held.indices {
                        guard let heldPath = held[index].path, heldPath.count > path.count, heldPath.starts(with: path) else { continue }
                        if let step = moved(heldPath[path.count]) {
                            held[index].path?[path.count] = step
                        } else {
                            held[index].path = nil
                        }
                    }
                }
                if reuse == nil, held.count < 12 { held.append((path, target)) }
                // Detached views are dropped now and then, so new ones are held.
                if step % 50 == 49 { held.removeAll { $0.path == nil } }
            }
            #expect(setting.value == model.mixed, "step \(step)")
            for (path, value) in held {
                let expected = path.flatMap { model.at($0[...]) }
                switch (value, expected) {
                case (.list(let list), .list?):
                    #expect(!list.isInvalidated && value == expected?.mixed, "held list at \(path), step \(step)")
                case (.dictionary(let map), .dictionary?):
                    #expect(!map.isInvalidated && value == expected?.mixed, "held dictionary at \(path), step \(step)")
                case (.list(let list), _):
                    #expect(list.isInvalidated, "held list at \(path), step \(step)")
                case (.dictionary(let map), _):
                    #expect(map.isInvalidated, "held dictionary at \(path), step \(step)")
                default:
                    Issue.record("a held value that is not a collection")
                }
            }
        }
        #expect(problems(db).isEmpty)
    }
}

/// What another thread's edit left in the model.
private final class EditResult: @unchecked Sendable {
    // @unchecked: written by the other thread before it signals, read after the wait.
    var shape: Shape?
}
