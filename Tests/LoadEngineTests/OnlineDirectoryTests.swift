import LoadProfile
import Testing

@testable import LoadEngine

/// The lock-free account directory: claims are exclusive, releases clear the online bit, random
/// picks only return online slots other than the caller's.
@Suite struct OnlineDirectoryTests {
    @Test func aSlotIsClaimedOnceUntilReleased() {
        let directory = OnlineDirectory(capacity: 130)
        #expect(directory.claim(64))
        #expect(!directory.claim(64))
        directory.release(64)
        #expect(directory.claim(64))
    }

    @Test func claimFreeWrapsAroundAndFailsWhenFull() {
        let directory = OnlineDirectory(capacity: 3)
        #expect(directory.claimFree(startingAt: 2) == 2)
        #expect(directory.claimFree(startingAt: 2) == 0)
        #expect(directory.claimFree(startingAt: 2) == 1)
        #expect(directory.claimFree(startingAt: 0) == nil)
    }

    @Test func randomOnlineReturnsOnlyOnlineSlotsOtherThanTheCaller() {
        let directory = OnlineDirectory(capacity: 200)
        var generator = SeededGenerator(seed: 7, stream: 0)
        #expect(directory.randomOnline(excluding: 0, using: &generator) == nil)
        for slot in [3, 70, 150] {
            _ = directory.claim(slot)
            directory.setOnline(slot, true)
        }
        var seen: Set<Int> = []
        for _ in 0..<300 {
            let pick = directory.randomOnline(excluding: 70, using: &generator)
            #expect(pick == 3 || pick == 150)
            if let pick { seen.insert(pick) }
        }
        #expect(seen == [3, 150], "both online slots are picked")
        directory.release(150)
        #expect(!directory.isOnline(150), "a release clears the online bit")
        #expect(directory.randomOnline(excluding: 70, using: &generator) == 3)
    }
}
