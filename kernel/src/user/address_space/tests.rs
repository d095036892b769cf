//! The address space's own tests: tables, pages and the page cache, frame by frame.

use super::*;

fn frames_in_use() -> u64 {
    with_memory(|m| m.frames.frames_in_use())
}

/// An address space's tables go back cleared, on the list of zeroed frames, however its
/// chunks share tables: two chunks under one level-2 table (one GiB), and one under
/// another level-3 table. A debug build (the kernel's tests) checks each is all zeros
/// as it goes on the list; the second round takes them as its tables, uncleared.
#[test_case]
fn tables_go_back_zeroed_whatever_their_chunks_share() {
    const PAGES: [u64; 3] = [0x40_0000, 0x60_0000, 0x7fff_ffe0_0000];
    let baseline = frames_in_use();
    for _ in 0..2 {
        let space = AddressSpace::new().unwrap();
        for at in PAGES {
            space.map_zeroed(at, PAGE, true).unwrap();
            space.write(at, &[0xa5; 8]).unwrap();
        }
        // Level 4; two level-3 tables, two level-2, three level-1; three pages.
        assert_eq!(frames_in_use() - baseline, 1 + 2 + 2 + 3 + 3);
        let mut byte = [0u8; 1];
        space.read(PAGES[1], &mut byte).unwrap();
        assert_eq!(byte, [0xa5]);
        drop(space);
        assert_eq!(frames_in_use(), baseline);
    }
}

/// A mapping that ran out of frames after its level-3 table leaves that table with
/// nothing under it; unmapping the range gives it back (it was once kept linked, and
/// never freed).
#[test_case]
fn a_mapping_that_failed_part_way_leaves_no_table_behind() {
    const AT: u64 = 0x40_0000;
    let baseline = frames_in_use();
    let space = AddressSpace::new().unwrap();
    with_memory(|m| {
        space.note_pages(AT, AT + PAGE);
        let l3 = m.frames.allocate_zeroed().unwrap();
        let level_4 = m.mapper.phys_offset() + space.level_4.start_address().as_u64();
        // SAFETY: the space's own level-4 table, through the physical-memory map.
        let level_4: &mut PageTable = unsafe { &mut *level_4.as_mut_ptr() };
        level_4[0].set_frame(l3, F::PRESENT | F::WRITABLE | F::USER_ACCESSIBLE);
        space.tables.fetch_add(1, Relaxed);
    });
    space.unmap(AT, PAGE);
    assert_eq!(
        space.tables.load(Relaxed),
        0,
        "the level-3 table is still there"
    );
    drop(space);
    assert_eq!(frames_in_use(), baseline);
}

/// Two programs mapping the same file's pages share one frame per page, read in once;
/// the frames outlive both programs in the page cache, and dropping the cache gives
/// every frame back.
#[test_case]
fn file_pages_are_read_once_and_shared() {
    static FILE: [u8; 6000] = [7; 6000];
    const BASE: u64 = 0x40_0000;
    with_memory(Memory::drop_page_cache);
    let baseline = frames_in_use();
    let first = AddressSpace::new().unwrap();
    first.map_cached(BASE, 6000, &FILE, 0).unwrap();
    // Level-4, -3, -2 and -1 tables, and the file's two pages.
    assert_eq!(frames_in_use() - baseline, 6);
    let second = AddressSpace::new().unwrap();
    second.map_cached(BASE, 6000, &FILE, 0).unwrap();
    assert_eq!(
        frames_in_use() - baseline,
        10,
        "tables only: the pages are shared"
    );
    let mut tail = [0u8; 4];
    second.read(BASE + 5998, &mut tail).unwrap();
    assert_eq!(
        tail,
        [7, 7, 0, 0],
        "the file's bytes, then zeros past its end"
    );
    assert_eq!(second.write(BASE, &[1]), Err(Fault), "read-only");
    drop((first, second));
    assert_eq!(frames_in_use() - baseline, 2, "kept by the page cache");
    with_memory(Memory::drop_page_cache);
    assert_eq!(frames_in_use(), baseline);
}
