import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.utils.Exit;

/**
 * Runs many invocations of Kafka's command-line tools in one JVM, as a shell would run them one
 * after the other: each invocation gets its own stdout, stderr and stdin, its exit status (what
 * the tool passes to Exit.exit, or 0 when main returns, 1 when main throws), and the shutdown
 * hooks it registered run when it ends, as at the exit of its own JVM. A tool that calls
 * System.exit or adds a hook to the JVM itself (VerifiableProducer) is handled alike: the exit is
 * refused by a security manager that allows everything else (-Djava.security.manager=allow), and
 * the JVM's new hooks are taken back and run (--add-opens java.base/java.lang=ALL-UNNAMED).
 *
 * Protocol, one line each way per invocation (fields separated by tabs, each base64 of UTF-8):
 *   in:  timeoutSeconds  stdin  mainClass  arg...
 *   out: status  stdout  stderr          (status 124 when the invocation did not end in time)
 */
public final class ToolLauncher {

    /** What one invocation printed and how it ended. */
    static final class Invocation {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<Runnable> shutdownHooks = new ArrayList<>();
        volatile Integer status;
        volatile boolean exited;  // after its exit only its shutdown hooks print, as in a JVM
        volatile Thread mainThread;
    }

    /** Thrown in place of the JVM's exit; ends the invocation's main. */
    static final class ExitCalled extends RuntimeException {
        ExitCalled(int status) {
            super("exit " + status, null, false, false);
        }
    }

    static final InheritableThreadLocal<Invocation> CURRENT = new InheritableThreadLocal<>();
    static final ThreadLocal<Boolean> IN_HOOK = ThreadLocal.withInitial(() -> false);
    static volatile Invocation latest = new Invocation();

    static Invocation invocation() {
        Invocation here = CURRENT.get();
        return here != null ? here : latest;
    }

    /** A stream that writes to the stdout or stderr of the invocation of the writing thread. */
    static final class Routed extends OutputStream {
        private final boolean err;

        Routed(boolean err) {
            this.err = err;
        }

        private ByteArrayOutputStream target() {
            Invocation inv = invocation();
            if (inv.exited && !IN_HOOK.get()) return null;
            return err ? inv.err : inv.out;
        }

        @Override
        public void write(int b) {
            ByteArrayOutputStream target = target();
            if (target == null) return;
            synchronized (target) {
                target.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            ByteArrayOutputStream target = target();
            if (target == null) return;
            synchronized (target) {
                target.write(b, off, len);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        PrintStream protocol = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(new PrintStream(new Routed(false), true, "UTF-8"));
        System.setErr(new PrintStream(new Routed(true), true, "UTF-8"));
        Exit.setExitProcedure((status, message) -> exitCalled(status));
        Exit.setHaltProcedure((status, message) -> exitCalled(status));
        Exit.setShutdownHookAdder((name, hook) -> invocation().shutdownHooks.add(hook));
        System.setSecurityManager(new ExitRefusingSecurityManager());
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = requests.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] fields = line.split("\t", -1);
            String[] decoded = new String[fields.length];
            for (int i = 0; i < fields.length; i++) decoded[i] = decode(fields[i]);
            int timeout = Integer.parseInt(decoded[0]);
            String[] toolArgs = new String[decoded.length - 3];
            System.arraycopy(decoded, 3, toolArgs, 0, toolArgs.length);
            Invocation done = run(decoded[2], toolArgs, decoded[1], timeout);
            protocol.println(done.status + "\t" + encode(done.out) + "\t" + encode(done.err));
        }
        Runtime.getRuntime().halt(0);  // threads a tool left behind do not keep the JVM up
    }

    static void exitCalled(int status) {
        Invocation inv = invocation();
        if (inv.status == null) inv.status = status;
        inv.exited = true;
        Thread main = inv.mainThread;
        if (main != null && main != Thread.currentThread()) main.interrupt();
        throw new ExitCalled(status);
    }

    /** Allows everything but an exit from a tool's threads, which ends the invocation instead. */
    static final class ExitRefusingSecurityManager extends SecurityManager {
        @Override
        public void checkPermission(java.security.Permission permission) {
        }

        @Override
        public void checkPermission(java.security.Permission permission, Object context) {
        }

        @Override
        public void checkExit(int status) {
            if (CURRENT.get() != null) exitCalled(status);
        }
    }

    /** The hooks registered with the JVM itself (Runtime.addShutdownHook). */
    @SuppressWarnings("unchecked")
    static Set<Thread> jvmShutdownHooks() {
        try {
            Class<?> hooks = Class.forName("java.lang.ApplicationShutdownHooks");
            java.lang.reflect.Field field = hooks.getDeclaredField("hooks");
            field.setAccessible(true);
            synchronized (hooks) {
                return new HashSet<>(((Map<Thread, Thread>) field.get(null)).keySet());
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return new HashSet<>();
        }
    }

    static Invocation run(String className, String[] args, String stdin, int timeoutSeconds) throws InterruptedException {
        Invocation inv = new Invocation();
        latest = inv;
        System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        Set<Thread> hooksBefore = jvmShutdownHooks();
        Thread thread = new Thread(() -> {
            CURRENT.set(inv);
            inv.mainThread = Thread.currentThread();
            int status = 0;
            try {
                Method main = Class.forName(className).getMethod("main", String[].class);
                main.invoke(null, (Object) args);
            } catch (InvocationTargetException e) {
                status = endedBy(e.getCause());
            } catch (ExitCalled e) {
                // the status is the one exitCalled recorded
            } catch (Throwable e) {
                status = endedBy(e);
            }
            if (inv.status == null) inv.status = status;
            Set<Thread> added = jvmShutdownHooks();
            added.removeAll(hooksBefore);
            for (Thread hook : added) {
                Runtime.getRuntime().removeShutdownHook(hook);
                inv.shutdownHooks.add(hook::run);
            }
            runShutdownHooks(inv);
        }, "tool-main");
        thread.setDaemon(true);
        thread.start();
        thread.join(timeoutSeconds * 1000L);
        if (thread.isAlive()) {
            thread.interrupt();
            thread.join(2000);
            synchronized (inv.err) {
                byte[] note = ("\n[launcher: no exit within " + timeoutSeconds + " s]\n").getBytes(StandardCharsets.UTF_8);
                inv.err.write(note, 0, note.length);
            }
            inv.status = 124;
        }
        return inv;
    }

    /** The status of a main that threw: the exit's, or 1 as the JVM's for an uncaught exception. */
    static int endedBy(Throwable thrown) {
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof ExitCalled) return 0;  // status already recorded by exitCalled
        }
        thrown.printStackTrace(System.err);
        return 1;
    }

    static void runShutdownHooks(Invocation inv) {
        for (Runnable hook : new ArrayList<>(inv.shutdownHooks)) {
            Thread thread = new Thread(() -> {
                CURRENT.set(inv);
                IN_HOOK.set(true);
                try {
                    hook.run();
                } catch (Throwable ignored) {
                    // a hook that fails at exit fails silently, as in the JVM's exit
                }
            }, "tool-shutdown-hook");
            thread.setDaemon(true);
            thread.start();
            try {
                thread.join(30000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static String decode(String field) {
        return new String(Base64.getDecoder().decode(field), StandardCharsets.UTF_8);
    }

    static String encode(ByteArrayOutputStream bytes) {
        synchronized (bytes) {
            return Base64.getEncoder().encodeToString(bytes.toByteArray());
        }
    }
}
