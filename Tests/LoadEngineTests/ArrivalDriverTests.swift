import Atomics
import Foundation
import LoadProfile
import LoadResults
import NIOCore
import NIOEmbedded
import NIOPosix
import SessionCore
import Testing
import XMPPCore

@testable import LoadEngine

/// The per-loop arrival driver on an `EmbeddedEventLoop`: arrivals start at their intended times,
/// late ones are dropped (never queued), and arrivals with no free account are dropped too.
@Suite struct ArrivalDriverTests {
    /// Gives every user its own embedded channel (the server never answers: users stay logging in).
    final class ChannelPerUser: UserConnecting {
        let loop: EmbeddedEventLoop
        unowned let context: LoopContext
        var channels: [EmbeddedChannel] = []

        init(loop: EmbeddedEventLoop, context: LoopContext) {
            self.loop = loop
            self.context = context
        }

        func connect(_ user: VirtualUser, to target: ConnectTarget) {
            let channel = EmbeddedChannel(loop: loop)
            channels.append(channel)
            do {
                try SessionPipeline.session(user, .tcp).install(on: channel, context: context)
                try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222)).wait()
            } catch {
                user.connectFailed(ConnectionFailure(error))
            }
        }
    }

    /// Fails every connect at once (for a real loop with no server).
    final class RefusingConnector: UserConnecting {
        func connect(_ user: VirtualUser, to target: ConnectTarget) { user.connectFailed(.refused) }
    }

    struct Setup {
        let loop: EmbeddedEventLoop
        let context: LoopContext
        let driver: ArrivalDriver
        let connector: ChannelPerUser

        init(plan: LoadPlan, accounts: ClosedRange<Int> = 1...100) throws {
            let loop = EmbeddedEventLoop()
            self.loop = loop
            (context, driver) = try Self.make(on: loop, plan: plan, accounts: accounts)
            connector = ChannelPerUser(loop: loop, context: context)
            context.connector = connector
        }

        static func make(on loop: any EventLoop, plan: LoadPlan, accounts: ClosedRange<Int>) throws -> (LoopContext, ArrivalDriver) {
            let definition = try ProfileLoader.load(
                yaml: """
                    name: idle
                    login: {sasl: PLAIN, tls: none}
                    steps: [login, stay_online]
                    """, file: "idle.yaml")
            let configuration = RunConfiguration(
                host: "127.0.0.1", port: 5222, domain: "load.test", accounts: accounts,
                password: "secret", tls: TLSMode.none, outputDirectory: "/tmp/unused",
                maxArrivalLateness: .seconds(1))
            let environment = RunEnvironment(
                configuration: configuration, runID: "arrivals",
                server: try SocketAddress(ipAddress: "127.0.0.1", port: 5222), tls: nil,
                definition: definition, seed: 3, clockOrigin: loop.now)
            let context = LoopContext(eventLoop: loop, environment: environment, loopIndex: 0)
            let driver = ArrivalDriver(
                context: context, schedule: ArrivalSchedule(plan: plan), loopCount: 1, sessionCap: 10_000,
                liveSessions: LiveSessionCounter(), serials: ManagedAtomic(0))
            return (context, driver)
        }

        func counters() -> IntervalSnapshot { context.recorder.takeSnapshot(start: 0, end: 1) }
    }

    @Test func closedModelArrivalsStartAtTheirIntendedTimes() throws {
        let setup = try Setup(plan: .closed(sessions: 10, ramp: .seconds(1), duration: nil))
        setup.driver.start(runStart: setup.loop.now)
        setup.loop.run()
        #expect(setup.context.liveSessionCount == 1, "the first arrival is due at once")
        setup.loop.advanceTime(by: .milliseconds(450))
        #expect(setup.context.liveSessionCount == 5, "arrivals at 0, 100, …, 400 ms")
        setup.loop.advanceTime(by: .milliseconds(600))
        #expect(setup.context.liveSessionCount == 10)
        let snapshot = setup.counters()
        #expect(snapshot.counter(.sessionsStarted) == 10 && snapshot.counter(.droppedArrivals) == 0)
        #expect(setup.connector.channels.count == 10)
    }

    /// A real one-thread loop, blocked for 2.2 s right after the run starts: the arrivals at 0, 0.5 and
    /// 1.0 s are then more than 1 s late and must be dropped, never started late. What the busy machine
    /// guarantees: at least those three are dropped, and every arrival is started or dropped.
    @Test(.timeLimit(.minutes(1)))
    func arrivalsLaterThanTheMaximumLatenessAreDroppedNotQueued() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let bound = try await loop.submit {
            let (context, driver) = try Setup.make(
                on: loop, plan: .closed(sessions: 6, ramp: .seconds(3), duration: nil),
                accounts: 1...100)
            context.connector = RefusingConnector()
            driver.start(runStart: loop.now)
            Thread.sleep(forTimeInterval: 2.2)  // the loop is blocked; the first arrival's timer fires late
            return NIOLoopBound((context, driver), eventLoop: loop)
        }.get()
        // Poll, with a deadline, until every arrival of the 3 s ramp came due.
        let deadline = ContinuousClock.now + .seconds(20)
        while try await !loop.submit({ bound.value.1.isExhausted }).get(), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let (dropped, started, exhausted) = try await loop.submit {
            let snapshot = bound.value.0.recorder.takeSnapshot(start: 0, end: 1)
            return (snapshot.counter(.droppedArrivals), snapshot.counter(.sessionsStarted), bound.value.1.isExhausted)
        }.get()
        #expect(exhausted, "every arrival came due")
        #expect(dropped >= 3, "the arrivals over 1 s late were dropped")
        #expect(dropped + started == 6)
        try await group.shutdownGracefully()
    }

    @Test func openModelArrivalsWithNoFreeAccountAreDropped() throws {
        let setup = try Setup(plan: .open(rate: 10, duration: .seconds(1)), accounts: 1...4)
        setup.driver.start(runStart: setup.loop.now)
        setup.loop.run()
        setup.loop.advanceTime(by: .seconds(1))
        let snapshot = setup.counters()
        #expect(snapshot.counter(.sessionsStarted) == 4, "4 accounts, held by idle sessions")
        #expect(snapshot.counter(.droppedArrivals) == 6)
        #expect(snapshot.errors == ["dropped-no-free-account": 6])
    }

    @Test func stoppingEndsArrivalsAndTheLoopGoesIdleWhenItsSessionsEnd() throws {
        let setup = try Setup(plan: .closed(sessions: 3, ramp: .zero, duration: nil))
        var idle = false
        setup.driver.onIdle = { idle = true }
        setup.driver.start(runStart: setup.loop.now)
        setup.loop.run()
        setup.driver.stop()
        #expect(!idle, "three sessions are still alive")
        setup.context.closeAll()
        #expect(idle)
        #expect(setup.counters().errors == ["stopped-at-deadline": 3])
    }
}
