import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MQTT

/// The hand-over between the network thread and the consumer: batches, order, the end.
@Suite struct MessageQueueTests {
    private static func message(_ index: Int) -> MQTTMessage {
        MQTTMessage(topic: "t/\(index)", payload: Array("\(index)".utf8))
    }

    @Test func everythingWaitingComesAsOneBatchInOrder() async {
        let queue = MessageQueue()
        for index in 0..<5 { queue.append(Self.message(index)) }
        var batch: [MQTTMessage] = []
        #expect(await queue.next(into: &batch))
        #expect(batch.map(\.topic) == (0..<5).map { "t/\($0)" })
        queue.append(Self.message(5))
        #expect(await queue.next(into: &batch))
        #expect(batch.map(\.topic) == ["t/5"], "the handled batch is replaced, not appended to")
    }

    @Test func aWaitingConsumerIsWokenByTheNextMessage() async {
        let queue = MessageQueue()
        let consumer = Task { await queue.next() }
        // The consumer parks on the empty queue; the message may also arrive before it does.
        try? await Task.sleep(for: .milliseconds(50))
        queue.append(Self.message(1))
        #expect(await consumer.value?.map(\.topic) == ["t/1"])
    }

    @Test func finishHandsOverWhatIsLeftThenEnds() async {
        let queue = MessageQueue()
        queue.append(Self.message(1))
        queue.finish()
        queue.append(Self.message(2))
        #expect(await queue.next()?.map(\.topic) == ["t/1"], "appended before finish: delivered")
        #expect(await queue.next() == nil, "appended after finish: dropped, and the queue ends")
    }

    @Test func finishWakesAWaitingConsumer() async {
        let queue = MessageQueue()
        let consumer = Task { await queue.next() }
        try? await Task.sleep(for: .milliseconds(50))
        queue.finish()
        #expect(await consumer.value == nil)
    }

    @Test func cancellingTheConsumerEndsItsWait() async {
        let queue = MessageQueue()
        let consumer = Task { await queue.next() }
        try? await Task.sleep(for: .milliseconds(50))
        consumer.cancel()
        #expect(await consumer.value == nil)
        // The queue still works for the next consumer.
        queue.append(Self.message(3))
        #expect(await queue.next()?.map(\.topic) == ["t/3"])
    }

    /// A producer thread as fast as it can, a consumer taking batches: nothing lost, nothing
    /// reordered, and under load the consumer takes many messages per wake-up.
    @Test func aFloodFromAnotherThreadArrivesWholeAndInOrder() async {
        let queue = MessageQueue()
        let count = 200_000
        let producer = Thread {
            for index in 0..<count { queue.append(MQTTMessage(topic: "t", payload: [UInt8(truncatingIfNeeded: index)])) }
            queue.finish()
        }
        producer.start()
        var received = 0
        var batches = 0
        var inOrder = true
        var batch: [MQTTMessage] = []
        while await queue.next(into: &batch) {
            batches += 1
            for message in batch {
                if message.payload != [UInt8(truncatingIfNeeded: received)] { inOrder = false }
                received += 1
            }
        }
        #expect(received == count)
        #expect(inOrder)
        #expect(batches < count, "some hand-overs carried more than one message")
    }

    /// ``MQTTClient/messages``: one message at a time over the batches.
    @Test func theSequenceHandsOutEveryMessage() async {
        let queue = MessageQueue()
        for index in 0..<3 { queue.append(Self.message(index)) }
        queue.finish()
        var topics: [String] = []
        for await message in MQTTMessages(queue: queue) { topics.append(message.topic) }
        #expect(topics == ["t/0", "t/1", "t/2"])
    }
}
