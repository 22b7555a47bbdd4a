import LoadEngine
import LoadProfile
import LoadResults

/// Runs each run of an `ab` comparison inside this process: `options` with the side's servers, the
/// run's directory, label and tags (as `ChildRunLauncher` passes them to a child), resolved by
/// `RunOptionsResolver` and run as a `LoadRun` judged like `xmppload run` (its exit status from its
/// verdict: `RunExitStatus`). For embedding and for tests that need no binary; a child process
/// keeps each run's memory and event loops apart, which `xmppload ab` prefers.
public struct InProcessRunLauncher: RunLauncher {
    public var options: RunOptions
    public var context: RunOptionsContext
    public var definition: RunDefinition

    public init(options: RunOptions, context: RunOptionsContext, definition: RunDefinition) {
        self.options = options
        self.context = context
        self.definition = definition
    }

    public func launch(_ planned: ABPlan.PlannedRun) async throws -> ABRunner.Outcome {
        var options = options
        options.servers = planned.side.servers
        options.monitors += planned.side.monitors
        options.out = planned.directory
        options.label = planned.side.label
        options.tags += ["ab-round=\(planned.round)", "ab-side=\(planned.side.role)"]
        let resolved: ResolvedRun
        do {
            resolved = try RunOptionsResolver(options: options, context: context).resolve(definition)
        } catch {
            return ABRunner.Outcome(status: RunExitStatus.usage.rawValue, log: nil)
        }
        let run = LoadRun(configuration: resolved.configuration, definition: resolved.definition, plan: resolved.plan, runID: resolved.runID)
        do {
            let result = try await run.run(judge: RunJudge(evaluator: resolved.evaluator, abortOnFail: options.abortOnFail))
            return ABRunner.Outcome(status: RunExitStatus(result).rawValue, log: nil)
        } catch {
            return ABRunner.Outcome(status: RunExitStatus.failure.rawValue, log: nil)
        }
    }
}
