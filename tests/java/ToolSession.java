import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

import org.apache.kafka.common.utils.Exit;

/** Runs Kafka's command-line tools in one JVM, one after another: each line read from stdin is a
 *  tool class and its arguments, separated by tabs. The tool's `main` runs with its output
 *  captured and `Exit` made to return instead of ending the JVM; for each, three lines are
 *  printed: "STATUS <exit status>", "STDOUT <base64>", "STDERR <base64>"
 *  (tests/security/test_delegation_tokens.py). */
public class ToolSession {
    static final class ExitCalled extends RuntimeException {
        final int status;

        ExitCalled(int status) {
            super(null, null, false, false);
            this.status = status;
        }
    }

    public static void main(String[] args) throws Exception {
        Exit.setExitProcedure((status, message) -> { throw new ExitCalled(status); });
        Exit.setHaltProcedure((status, message) -> { throw new ExitCalled(status); });
        PrintStream stdout = System.out, stderr = System.err;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
            int status = 0;
            System.setOut(new PrintStream(out, true, "UTF-8"));
            System.setErr(new PrintStream(err, true, "UTF-8"));
            try {
                Method main = Class.forName(parts[0]).getMethod("main", String[].class);
                main.invoke(null, (Object) Arrays.copyOfRange(parts, 1, parts.length));
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof ExitCalled) {
                    status = ((ExitCalled) cause).status;
                } else {
                    status = 1;
                    cause.printStackTrace(System.err);
                }
            } finally {
                System.out.flush();
                System.err.flush();
                System.setOut(stdout);
                System.setErr(stderr);
            }
            stdout.println("STATUS " + status);
            stdout.println("STDOUT " + Base64.getEncoder().encodeToString(out.toByteArray()));
            stdout.println("STDERR " + Base64.getEncoder().encodeToString(err.toByteArray()));
            stdout.flush();
        }
    }
}
