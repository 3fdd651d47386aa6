// The work structures of BPE merging, laid over int32 arrays the caller provides (the
// tokenizer allocates nothing): a linked list of symbols and a heap of pairs to merge.
#ifndef EMBER_RUNTIME_TEXT_BPE_MERGE_H_
#define EMBER_RUNTIME_TEXT_BPE_MERGE_H_

#include <cstddef>
#include <cstdint>

namespace ember {

// The symbols of a text being merged, in order, as a doubly linked list in one int32 per
// symbol. A symbol keeps the index it had before merging (merging keeps the left one),
// and live symbol i spans the indices [i, link[i]). When a symbol spans more than one
// index, the last of them (a merged-away symbol's) holds i: so the symbol before j is
// j - 1 when that one is live (its link is j) and link[j - 1] otherwise. Separate next
// and prev arrays would be plainer, but this saves 4 bytes per prompt byte.
class SymbolList {
 public:
  static constexpr int32_t kNone = -1;

  // Every index its own symbol.
  SymbolList(int32_t* link, int32_t size) : link_(link), size_(size) {
    for (int32_t i = 0; i < size; ++i) link_[i] = i + 1;
  }

  // Neighbours of live symbol i, or kNone. Symbol 0 is always live and first.
  int32_t Next(int32_t i) const { return link_[i] < size_ ? link_[i] : kNone; }
  int32_t Prev(int32_t i) const {
    if (i == 0) return kNone;
    return link_[i - 1] == i ? i - 1 : link_[i - 1];
  }

  // Joins live symbol i and the one after it (which must exist) into i.
  void MergeWithNext(int32_t i) {
    const int32_t end = link_[link_[i]];
    link_[i] = end;
    link_[end - 1] = i;  // end - 1 > i: a merged-away index, free for the back link
  }

 private:
  int32_t* link_;
  int32_t size_;
};

// A symbol and the key of the pair it starts (the piece or the merge the pair makes).
struct MergeEntry {
  int32_t symbol;
  int32_t key;
};

// A heap of the symbols whose pairs can merge, best first, that can also move or remove
// any member, so it never holds a stale pair. heap_ holds the entries, symbol and key
// side by side so that ordering reads only the heap's own memory, with room for every
// symbol; slot_[i] is symbol i's place in it. before(a, b) says entry a's pair merges
// before b's; it must be a strict total order.
template <class Before>
class MergeHeap {
 public:
  // heap holds 2 * num_symbols int32, slot num_symbols.
  MergeHeap(int32_t* heap, int32_t* slot, int32_t num_symbols, Before before)
      : heap_(heap), slot_(slot), before_(before) {
    for (int32_t i = 0; i < num_symbols; ++i) slot_[i] = kOut;
  }

  bool empty() const { return size_ == 0; }
  MergeEntry top() const { return Get(0); }
  bool Contains(int32_t i) const { return slot_[i] >= 0; }

  void Push(int32_t i, int32_t key) {
    Place(size_++, {i, key});
    SiftUp(size_ - 1);
  }

  // Gives member i a new key and moves it where that puts it (or pushes it).
  void Update(int32_t i, int32_t key) {
    if (!Contains(i)) return Push(i, key);
    const size_t k = static_cast<size_t>(slot_[i]);
    heap_[2 * k + 1] = key;
    SiftUp(k);
    SiftDown(static_cast<size_t>(slot_[i]));
  }

  // Takes i out of the heap; nothing if it is not in it (or i is negative).
  void Remove(int32_t i) {
    if (i < 0 || slot_[i] == kOut) return;
    const size_t k = static_cast<size_t>(slot_[i]);
    slot_[i] = kOut;
    if (k == --size_) return;
    const MergeEntry last = Get(size_);
    Place(k, last);  // the last entry fills the hole, then moves up or down
    SiftUp(k);
    SiftDown(static_cast<size_t>(slot_[last.symbol]));
  }

 private:
  static constexpr int32_t kOut = -1;

  MergeEntry Get(size_t k) const { return {heap_[2 * k], heap_[2 * k + 1]}; }
  void Place(size_t k, MergeEntry e) {
    heap_[2 * k] = e.symbol;
    heap_[2 * k + 1] = e.key;
    slot_[e.symbol] = static_cast<int32_t>(k);
  }
  // Four children a node: half the levels of a binary heap, and a node's children lie
  // side by side, so a sift through a heap larger than the caches misses half as often.
  static constexpr size_t kArity = 4;
  void SiftUp(size_t k) {
    const MergeEntry e = Get(k);
    for (; k > 0 && before_(e, Get((k - 1) / kArity)); k = (k - 1) / kArity) {
      Place(k, Get((k - 1) / kArity));
    }
    Place(k, e);
  }
  void SiftDown(size_t k) {
    const MergeEntry e = Get(k);
    for (size_t first; (first = kArity * k + 1) < size_;) {
      size_t best = first;
      const size_t end = first + kArity < size_ ? first + kArity : size_;
      for (size_t c = first + 1; c < end; ++c) {
        if (before_(Get(c), Get(best))) best = c;
      }
      if (!before_(Get(best), e)) break;
      Place(k, Get(best));
      k = best;
    }
    Place(k, e);
  }

  int32_t* heap_;
  int32_t* slot_;
  size_t size_ = 0;
  Before before_;
};

// Merges the symbols sym[0, m) (followed by room for 4m int32: the list's links, the
// heap's slots and entries) until no adjacent pair can merge; returns how many are left
// in sym[0, ...). `pair(left, right)` is the key of the pair's merge, or -1; `before`
// orders entries (the best merge first, a strict total order); `result(key)` is the
// merged symbol. A merge looks up only the two pairs it changes: O(m log m).
template <class Pair, class Before, class Result>
size_t MergeSymbols(int32_t* sym, int32_t m, Pair pair, Before before, Result result) {
  if (m < 2) return static_cast<size_t>(m);
  SymbolList list(sym + m, m);  // then the heap's slots (m) and entries (2m)
  MergeHeap<Before> heap(sym + 3 * m, sym + 2 * m, m, before);
  // Symbol i's pair changed: look it up again.
  auto update = [&](int32_t i) {
    const int32_t next = list.Next(i);
    const int32_t key = next == SymbolList::kNone ? -1 : pair(sym[i], sym[next]);
    if (key >= 0) {
      heap.Update(i, key);
    } else {
      heap.Remove(i);
    }
  };
  for (int32_t i = 0; i < m; ++i) update(i);
  while (!heap.empty()) {
    const MergeEntry best = heap.top();
    const int32_t i = best.symbol;
    heap.Remove(list.Next(i));  // its pair is gone with it
    sym[i] = result(best.key);
    list.MergeWithNext(i);
    update(i);  // i stays in the heap if it can merge again: one sift, not two
    const int32_t prev = list.Prev(i);
    if (prev != SymbolList::kNone) update(prev);
  }
  // Compact the live symbols; the k-th sits at index >= k, so nothing is overwritten
  // before it is read.
  size_t count = 0;
  for (int32_t i = 0; i != SymbolList::kNone; i = list.Next(i)) sym[count++] = sym[i];
  return count;
}

}  // namespace ember

#endif  // EMBER_RUNTIME_TEXT_BPE_MERGE_H_
