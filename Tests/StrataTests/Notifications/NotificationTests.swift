// Change notifications on objects, Results, Lists and databases, delivered synchronously to
// this thread's instance after its own commits and on refresh().

import Foundation
import Testing
@testable import Strata
import StrataStore
import StrataTestWorkloads

@Suite struct ObjectNotificationTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: notificationTypes) }

    @Test func aChangeReportsThePropertiesWithOldAndNewValues() throws {
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1, "title": "draft", "rank": 3]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe { (change: ObjectChange<Note>) in recorder.record(change) }
        try db.write { note.title = "final" }
        #expect(recorder.changes.count == 1)
        guard case .change(let object, let properties) = recorder.changes.first else {
            Issue.record("expected a change, got \(recorder.changes)"); return
        }
        #expect(object.isSameObject(as: note))
        #expect(properties.map(\.name) == ["title"])
        #expect(properties.first?.oldValue as? String == "draft")
        #expect(properties.first?.newValue as? String == "final")
        // The next change's old value is the last reported new value.
        try db.write { note.title = "published"; note.rank = 4 }
        guard case .change(_, let second) = recorder.changes.last else { Issue.record("no second change"); return }
        #expect(second.map(\.name) == ["title", "rank"])
        #expect(second.first?.oldValue as? String == "final")
        #expect(second.last?.oldValue as? Int == 3 && second.last?.newValue as? Int == 4)
        token.invalidate()
    }

    @Test func assigningTheSameValueCountsAsAChange() throws {
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1, "title": "same"]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe { (change: ObjectChange<Note>) in recorder.record(change) }
        try db.write { note.title = "same" }
        guard case .change(_, let properties) = recorder.changes.first else { Issue.record("no change"); return }
        #expect(properties.map(\.name) == ["title"])
        _ = token
    }

    @Test func deletionIsReportedOnceAndEndsTheObservation() throws {
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe { (change: ObjectChange<Note>) in recorder.record(change) }
        try db.write { db.delete(note) }
        try db.write { db.create(Note.self, value: ["id": 2]) }
        #expect(recorder.changes.count == 1)
        if case .deleted = recorder.changes.first {} else { Issue.record("expected .deleted, got \(recorder.changes)") }
        #expect(token.invalidate() == false || recorder.changes.count == 1)
    }

    @Test func otherObjectsAndUnrelatedCommitsDoNotNotify() throws {
        let db = try Database(configuration: configuration)
        let (a, _) = try db.write { (db.create(Note.self, value: ["id": 1]), db.create(Note.self, value: ["id": 2])) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = a.observe { (change: ObjectChange<Note>) in recorder.record(change) }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 2)?.title = "other" }
        try db.write { db.create(NoteOwner.self, value: ["id": 1]) }
        #expect(recorder.changes.isEmpty)
        _ = token
    }

    @Test func withoutKeyPathsLinkedObjectsDoNotCountButTheLinkDoes() throws {
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1, "owner": ["id": 1, "name": "Ann"]]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe { (change: ObjectChange<Note>) in recorder.record(change) }
        try db.write { note.owner?.name = "Bo" }
        #expect(recorder.changes.isEmpty)
        try db.write { note.owner = db.create(NoteOwner.self, value: ["id": 2]) }
        guard case .change(_, let properties) = recorder.changes.first else { Issue.record("no change"); return }
        #expect(properties.map(\.name) == ["owner"])
        _ = token
    }

    @Test func keyPathsRestrictAndReachThroughLinks() throws {
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1, "owner": ["id": 1, "name": "Ann"]]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe(keyPaths: ["title", "owner.name"]) { (change: ObjectChange<Note>) in recorder.record(change) }
        try db.write { note.rank = 9 }                 // not observed
        try db.write { note.owner?.age = 40 }          // not observed
        #expect(recorder.changes.isEmpty)
        try db.write { note.owner?.name = "Bo" }       // observed through the link
        try db.write { note.title = "t" }              // observed
        #expect(recorder.changes.count == 2)
        if case .change(_, let properties) = recorder.changes.first { #expect(properties.map(\.name) == ["owner"]) }
        if case .change(_, let properties) = recorder.changes.last { #expect(properties.map(\.name) == ["title"]) }
        _ = token
    }

    @Test func partialKeyPathsWork() throws {
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe(keyPaths: [\Note.rank]) { change in recorder.record(change) }
        try db.write { note.title = "ignored" }
        try db.write { note.rank = 2 }
        #expect(recorder.changes.count == 1)
        _ = token
    }

    @Test func invalidatingOrReleasingTheTokenStopsNotifications() throws {
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe { (change: ObjectChange<Note>) in recorder.record(change) }
        #expect(token.invalidate() == true)
        #expect(token.invalidate() == false)
        try db.write { note.rank = 1 }
        do {
            let released = note.observe { (change: ObjectChange<Note>) in recorder.record(change) }
            _ = released
        }
        try db.write { note.rank = 2 }
        #expect(recorder.changes.isEmpty)
    }

    @Test func commitsOfAnotherThreadArriveOnRefresh() throws {
        // Once autorefresh lands, the refresh() below happens on its own.
        let db = try Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1]) }
        let recorder = Recorder<ObjectChange<Note>>()
        let token = note.observe { (change: ObjectChange<Note>) in recorder.record(change) }
        let configuration = configuration
        let done = DispatchSemaphore(value: 0)
        Thread {
            if let other = try? Database(configuration: configuration) {
                try? other.write { other.object(ofType: Note.self, forPrimaryKey: 1)?.title = "from elsewhere" }
            }
            done.signal()
        }.start()
        done.wait()
        #expect(recorder.changes.isEmpty)
        db.refresh()
        guard case .change(_, let properties) = recorder.changes.first else { Issue.record("no change"); return }
        #expect(properties.first?.newValue as? String == "from elsewhere")
        _ = token
    }
}

@Suite struct CollectionNotificationTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: notificationTypes) }

    @Test func resultsGetInitialThenUpdates() throws {
        let db = try Database(configuration: configuration)
        try db.write { for id in 1...3 { db.create(Note.self, value: ["id": id, "rank": id]) } }
        let results = db.objects(Note.self).sorted(byKeyPath: "rank")
        let recorder = Recorder<CollectionChange<Results<Note>>>()
        let token = results.observe { recorder.record($0) }
        guard case .initial(let initial) = recorder.changes.first else { Issue.record("no initial"); return }
        #expect(initial.count == 3)
        try db.write {
            db.create(Note.self, value: ["id": 4, "rank": 0])                       // new first
            db.delete(db.object(ofType: Note.self, forPrimaryKey: 2)!)              // old index 1
            db.object(ofType: Note.self, forPrimaryKey: 3)!.title = "changed"       // stays
        }
        #expect(recorder.changes.count == 2)
        let update = recorder.changes.last.flatMap(indices)
        #expect(update?.deletions == [1])
        #expect(update?.insertions == [0])
        #expect(update?.modifications == [2])
        _ = token
    }

    @Test func unrelatedCommitsAndFilteredOutChangesDoNotNotify() throws {
        let db = try Database(configuration: configuration)
        try db.write { for id in 1...3 { db.create(Note.self, value: ["id": id, "done": id == 3]) } }
        let open = db.objects(Note.self).where { !$0.done }
        let recorder = Recorder<CollectionChange<Results<Note>>>()
        let token = open.observe { recorder.record($0) }
        try db.write { db.create(NoteOwner.self, value: ["id": 1]) }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 3)!.title = "not in the results" }
        #expect(recorder.changes.count == 1)
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)!.done = true }
        #expect(recorder.changes.last.flatMap(indices)?.deletions == [0])
        _ = token
    }

    @Test func keyPathsFilterCollectionModifications() throws {
        let db = try Database(configuration: configuration)
        try db.write { for id in 1...2 { db.create(Note.self, value: ["id": id, "owner": ["id": id, "name": "o\(id)"]]) } }
        let recorder = Recorder<CollectionChange<Results<Note>>>()
        let token = db.objects(Note.self).observe(keyPaths: ["title", "owner.name"]) { recorder.record($0) }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)!.rank = 5 }
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 2)!.age = 5 }
        #expect(recorder.changes.count == 1)
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 2)!.name = "renamed" }
        #expect(recorder.changes.last.flatMap(indices)?.modifications == [1])
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)!.title = "t" }
        #expect(recorder.changes.last.flatMap(indices)?.modifications == [0])
        #expect(recorder.changes.count == 3)
        _ = token
    }

    @Test func listsReportInsertionsMovesAndRemovals() throws {
        let db = try Database(configuration: configuration)
        let book = try db.write {
            db.create(Notebook.self, value: ["id": 1, "notes": [["id": 1], ["id": 2], ["id": 3]], "labels": ["a", "b"]])
        }
        let recorder = Recorder<CollectionChange<List<Note>>>()
        let token = book.notes.observe { recorder.record($0) }
        let labels = Recorder<CollectionChange<List<String>>>()
        let labelToken = book.labels.observe { labels.record($0) }
        try db.write { book.notes.move(from: 2, to: 0) }
        #expect(recorder.changes.last.flatMap(indices).map { ($0.deletions, $0.insertions) } ?? ([], []) == ([2], [0]))
        try db.write { book.notes[1].title = "edited" }
        #expect(recorder.changes.last.flatMap(indices)?.modifications == [1])
        try db.write { book.labels.append("c"); book.labels.remove(at: 0) }
        #expect(labels.changes.last.flatMap(indices).map { ($0.deletions, $0.insertions) } ?? ([], []) == ([0], [1]))
        try db.write { db.delete(book) }
        #expect(recorder.changes.last.flatMap(indices)?.deletions == [0, 1, 2])
        #expect(recorder.changes.count == 4)
        _ = (token, labelToken)
    }

    /// Random inserts, deletes, updates and list moves; after each commit, applying the
    /// reported changes to the previous contents gives the new contents, and modifications
    /// name exactly the changed objects that stayed in place.
    @Test(arguments: [UInt64(1), 2, 3])
    func randomCommitsReportExactChanges(seed: UInt64) throws {
        let db = try Database(configuration: configuration)
        var rng = SplitMix64(seed: seed)
        try db.write { db.create(Notebook.self, value: ["id": 1]) }
        let book = db.object(ofType: Notebook.self, forPrimaryKey: 1)!
        let sorted = db.objects(Note.self).where { $0.rank < 70 }.sorted(by: [SortDescriptor(keyPath: "rank"), SortDescriptor(keyPath: "id")])
        let distinct = db.objects(Note.self).distinct(by: ["rank"])
        let all = db.objects(Note.self)
        var views: [(name: String, keys: () -> [Int], observe: (@escaping ([Int], [Int], [Int]) -> Void) -> NotificationToken)] = [
            ("sorted", { sorted.map(\.id) }, { block in sorted.observe { if let i = indices($0) { block(i.0, i.1, i.2) } } }),
            ("distinct", { distinct.map(\.id) }, { block in distinct.observe { if let i = indices($0) { block(i.0, i.1, i.2) } } }),
            ("all", { all.map(\.id) }, { block in all.observe { if let i = indices($0) { block(i.0, i.1, i.2) } } }),
            ("list", { book.notes.map(\.id) }, { block in book.notes.observe { if let i = indices($0) { block(i.0, i.1, i.2) } } }),
        ]
        var tokens: [NotificationToken] = []
        var previous: [[Int]] = views.map { $0.keys() }
        var reported: [([Int], [Int], [Int])?] = Array(repeating: nil, count: views.count)
        for (index, view) in views.enumerated() {
            tokens.append(view.observe { reported[index] = ($0, $1, $2) })
        }
        var nextID = 1
        var notified = 0
        for _ in 0..<60 {
            var touched = Set<Int>()
            try db.write {
                for _ in 0..<(1 + Int(rng.next() % 5)) {
                    let all = db.objects(Note.self).map(\.id)
                    switch rng.next() % 5 {
                    case 0, 1:
                        let note = db.create(Note.self, value: ["id": nextID, "rank": Int(rng.next() % 100)])
                        nextID += 1
                        if rng.next() % 2 == 0 { book.notes.insert(note, at: Int(rng.next() % UInt64(book.notes.count + 1))) }
                    case 2 where !all.isEmpty:
                        let id = all[Int(rng.next() % UInt64(all.count))]
                        db.delete(db.object(ofType: Note.self, forPrimaryKey: id)!)
                        touched.remove(id)
                    case 3 where !all.isEmpty:
                        let id = all[Int(rng.next() % UInt64(all.count))]
                        let note = db.object(ofType: Note.self, forPrimaryKey: id)!
                        if rng.next() % 2 == 0 { note.rank = Int(rng.next() % 100) } else { note.title = "t\(rng.next() % 10)" }
                        touched.insert(id)
                    case 4 where book.notes.count > 1:
                        book.notes.move(from: Int(rng.next() % UInt64(book.notes.count)), to: Int(rng.next() % UInt64(book.notes.count)))
                    default:
                        break
                    }
                }
            }
            for (index, view) in views.enumerated() {
                let now = view.keys()
                let old = previous[index]
                if let (deletions, insertions, modifications) = reported[index] {
                    notified += 1
                    let diff = CollectionDiff(deletions: deletions, insertions: insertions, modifications: modifications)
                    #expect(diff.applied(to: old, from: now) == now, "\(view.name): the reported changes do not turn the old contents into the new")
                    let inserted = Set(insertions)
                    let oldSet = Set(old)
                    let expected = now.indices.filter { !inserted.contains($0) && touched.contains(now[$0]) && oldSet.contains(now[$0]) }
                    #expect(modifications == expected, "\(view.name): modifications \(modifications), expected \(expected)")
                } else {
                    #expect(old == now, "\(view.name): the contents changed without a notification")
                    let changed = now.filter { touched.contains($0) && old.contains($0) }
                    #expect(changed.isEmpty, "\(view.name): objects \(changed) changed without a notification")
                }
                previous[index] = now
                reported[index] = nil
            }
        }
        #expect(notified > 60, "too few notifications to mean anything: \(notified)")
        _ = tokens
        views.removeAll()
    }

    @Test func aThousandObserversEachSeeEveryChangeOnce() throws {
        let db = try Database(configuration: configuration)
        let results = db.objects(Note.self)
        var counts = [Int](repeating: 0, count: 1000)
        var tokens: [NotificationToken] = []
        for index in 0..<1000 {
            tokens.append(results.observe { change in
                if case .update(_, _, let insertions, _) = change { counts[index] += insertions.count }
            })
        }
        for id in 0..<50 { try db.write { db.create(Note.self, value: ["id": id]) } }
        #expect(counts.allSatisfy { $0 == 50 })
        #expect(tokens.count == 1000)
    }

    @Test func aCallbackInvalidatingAnotherTokenStopsItsCallsAtOnce() throws {
        let db = try Database(configuration: configuration)
        let results = db.objects(Note.self)
        var calls = [0, 0, 0, 0]
        var tokens: [NotificationToken] = []
        for index in 0..<4 {
            tokens.append(results.observe { change in
                guard case .update = change else { return }
                calls[index] += 1
                // The first observer ends the second's observation and its own, mid-delivery.
                if index == 0 {
                    tokens[1].invalidate()
                    tokens[0].invalidate()
                }
            })
        }
        try db.write { db.create(Note.self, value: ["id": 1]) }
        #expect(calls == [1, 0, 1, 1])
        try db.write { db.create(Note.self, value: ["id": 2]) }
        #expect(calls == [1, 0, 2, 2])
        // An observer registered now shares the observation and starts from here.
        var late: [[Int]] = []
        tokens.append(results.observe { change in
            if case .update(_, _, let insertions, _) = change { late.append(insertions) }
        })
        try db.write { db.create(Note.self, value: ["id": 3]) }
        #expect(late == [[2]])
        #expect(calls == [1, 0, 3, 3])
    }

    @Test func sharedObserversGetTheSameResultsAndKeyPathsStaySeparate() throws {
        let db = try Database(configuration: configuration)
        try db.write { for id in 1...3 { db.create(Note.self, value: ["id": id, "rank": id]) } }
        let results = db.objects(Note.self).where { $0.rank > 0 }.sorted(byKeyPath: "rank")
        var delivered: [(ids: [Int], modifications: [Int])] = []
        var titles: [[Int]] = []
        let first = results.observe { change in
            if case .update(let results, _, _, let modifications) = change { delivered.append((results.map(\.id), modifications)) }
        }
        let second = db.objects(Note.self).where { $0.rank > 0 }.sorted(byKeyPath: "rank").observe { change in
            if case .update(let results, _, _, let modifications) = change { delivered.append((results.map(\.id), modifications)) }
        }
        let onlyTitles = results.observe(keyPaths: ["title"]) { change in
            if case .update(_, _, _, let modifications) = change { titles.append(modifications) }
        }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 2)!.done = true }
        #expect(delivered.map(\.ids) == [[1, 2, 3], [1, 2, 3]])
        #expect(delivered.map(\.modifications) == [[1], [1]])
        #expect(titles.isEmpty)
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)!.title = "t" }
        #expect(titles == [[0]])
        _ = (first, second, onlyTitles)
    }

    @Test func aMovedObjectIsReportedAndTheDeliveredResultsAreCurrent() throws {
        let db = try Database(configuration: configuration)
        try db.write { for id in 1...20 { db.create(Note.self, value: ["id": id, "rank": id * 10]) } }
        let results = db.objects(Note.self).where { $0.rank >= 0 }.sorted(byKeyPath: "rank")
        var updates: [(ids: [Int], deletions: [Int], insertions: [Int], modifications: [Int])] = []
        let token = results.observe { change in
            if case .update(let results, let deletions, let insertions, let modifications) = change {
                updates.append((results.map(\.id), deletions, insertions, modifications))
            }
        }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 3)!.rank = 1000 }         // to the end
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 7)!.rank = -1 }           // leaves
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 7)!.rank = 55 }           // comes back, after 5
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 9)!.rank = 91 }           // stays in place
        #expect(updates.count == 4)
        guard updates.count == 4 else { return }
        #expect(updates[0].deletions == [2] && updates[0].insertions == [19] && updates[0].modifications.isEmpty)
        #expect(updates[0].ids == [1, 2] + Array(4...20) + [3])
        #expect(updates[1].deletions == [5] && updates[1].insertions.isEmpty)
        #expect(updates[2].deletions.isEmpty && updates[2].insertions == [4])
        #expect(updates[2].ids == [1, 2, 4, 5, 7, 6] + Array(8...20) + [3])
        #expect(updates[3].deletions.isEmpty && updates[3].insertions.isEmpty && updates[3].modifications == [7])
        #expect(results.map(\.id) == updates[3].ids)
        _ = token
    }

    @Test func aQueryThroughALinkHearsTheLinkedObjectChange() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let ann = db.create(NoteOwner.self, value: ["id": 1, "name": "Ann"])
            let bob = db.create(NoteOwner.self, value: ["id": 2, "name": "Bob"])
            db.create(Note.self, value: ["id": 1, "owner": ann])
            db.create(Note.self, value: ["id": 2, "owner": bob])
        }
        let results = db.objects(Note.self).where { $0.owner.name == "Ann" }
        var updates: [(ids: [Int], deletions: [Int], insertions: [Int])] = []
        let token = results.observe { change in
            if case .update(let results, let deletions, let insertions, _) = change { updates.append((results.map(\.id), deletions, insertions)) }
        }
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 1)!.name = "Anne" }
        #expect(updates.count == 1)
        #expect(updates.last?.ids == [] && updates.last?.deletions == [0] && updates.last?.insertions == [])
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 2)!.name = "Ann" }
        #expect(updates.count == 2)
        #expect(updates.last?.ids == [2] && updates.last?.deletions == [] && updates.last?.insertions == [0])
        // An owner change that does not change who matches reports nothing.
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 1)!.age = 40 }
        #expect(updates.count == 2)
        _ = token
    }

    @Test func writeWithoutNotifyingSkipsThoseTokensForThatCommit() throws {
        let db = try Database(configuration: configuration)
        let results = db.objects(Note.self)
        let skipped = Recorder<CollectionChange<Results<Note>>>()
        let other = Recorder<CollectionChange<Results<Note>>>()
        let skippedToken = results.observe { skipped.record($0) }
        let otherToken = results.observe { other.record($0) }
        try db.write(withoutNotifying: [skippedToken]) { db.create(Note.self, value: ["id": 1]) }
        #expect(skipped.changes.count == 1)   // the initial notification only
        #expect(other.changes.count == 2)
        db.beginWrite()
        db.create(Note.self, value: ["id": 2])
        try db.commitWrite(withoutNotifying: [skippedToken])
        #expect(skipped.changes.count == 1)
        // The next commit is reported relative to what the skipped observer last saw.
        try db.write { db.create(Note.self, value: ["id": 3]) }
        #expect(skipped.changes.count == 2)
        #expect(skipped.changes.last.flatMap(indices)?.insertions == [2])
        _ = (skippedToken, otherToken)
    }

    @Test func databaseObserversHearEveryVersionChange() throws {
        let db = try Database(configuration: configuration)
        var notifications: [Database.Notification] = []
        let token = db.observe { notification, database in
            #expect(database == db)
            notifications.append(notification)
        }
        try db.write { db.create(Note.self, value: ["id": 1]) }
        try db.write { db.create(Note.self, value: ["id": 2]) }
        #expect(notifications == [.didChange, .didChange])
        _ = token
    }

    @Test func aCallbackThatWritesDoesNotTearOtherObservers() throws {
        let db = try Database(configuration: configuration)
        let results = db.objects(Note.self).sorted(byKeyPath: "id")
        var seen: [[Int]] = []
        var writer: NotificationToken?
        writer = results.observe { change in
            if case .update(let results, _, _, _) = change, results.count == 1 {
                _ = try? db.write { db.create(Note.self, value: ["id": 0]) }
            }
        }
        let reader = results.observe { change in
            if case .update(let results, _, let insertions, _) = change {
                // Insertions always index the contents the callback sees.
                #expect(insertions.allSatisfy { $0 < results.count })
                seen.append(results.map(\.id))
            }
        }
        try db.write { db.create(Note.self, value: ["id": 5]) }
        #expect(seen.last == [0, 5])
        _ = (writer, reader)
        writer = nil
    }
}
